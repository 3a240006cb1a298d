package store

import (
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// openSQLiteReadOnly opens a SQLite study database for reading only
// (Options.ReadOnly). It never creates, migrates or writes the file, so it
// also works in a read-only directory or on a read-only mount, where a
// read-write open fails with "unable to open database file" or "attempt to
// write a readonly database". It tries, in order:
//
//   - a read-write connection with query_only set, through which nothing
//     is written: in a writable directory SQLite then creates and, when
//     the last connection closes, removes the WAL's -wal and -shm files as
//     for any other reader, so reading leaves the directory as it found it
//     (like any SQLite reader, that last close checkpoints into the file
//     what a crashed writer left in the -wal: the data stay the same);
//   - mode=ro, for a directory it cannot write that already holds the -shm
//     (another process has the database open): it sees that process's
//     commits (the live view 'serve' gives);
//   - immutable=1, for a read-only directory without the -shm (a cleanly
//     closed database): SQLite then takes no locks and reads the file as
//     it is, which is exact for a database nobody can be writing through
//     this mount, but does not see changes made through another one while
//     it is open (logged as a warning).
//
// Each step falls through to the next only on SQLITE_CANTOPEN or
// SQLITE_READONLY.
func openSQLiteReadOnly(path string, o Options) (*DB, error) {
	if o.Create {
		return nil, fmt.Errorf("open study db %s: read-only and create exclude each other", path)
	}
	if _, err := checkFile(path, false); err != nil {
		return nil, err
	}
	var err error
	for _, param := range []string{"mode=rw&_pragma=query_only(1)", "mode=ro", "immutable=1"} {
		var d *DB
		d, err = openSQLiteMode(path, o, param)
		if err == nil {
			if param == "immutable=1" {
				o.Logger.Warn().Str("db", path).Msg("opened the study database immutable (it is in a directory this process cannot write): changes other processes make to it are not seen until it is opened again")
			}
			return d, nil
		}
		var se *sqlite.Error
		if !errors.As(err, &se) || (se.Code()&0xff != sqlite3.SQLITE_CANTOPEN && se.Code()&0xff != sqlite3.SQLITE_READONLY) {
			break
		}
	}
	return nil, fmt.Errorf("open study db %s: %w", path, classify(err))
}

// openSQLiteMode opens path for reading with the URI parameters param
// (see openSQLiteReadOnly) and checks its schema. It returns SQLite's
// error unclassified, so that the caller can tell SQLITE_CANTOPEN.
func openSQLiteMode(path string, o Options, param string) (*DB, error) {
	bt, _ := o.busy()
	dsn := fmt.Sprintf("file:%s?%s&_pragma=busy_timeout(%d)", uriPath(path), param, bt.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	d := &DB{conn: &conn{db: &sqlDB{DB: db}, path: path, log: o.Logger, readOnly: true}}
	// The first query opens the file: a CANTOPEN shows here.
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	if err := d.init(false, true); err != nil {
		db.Close()
		return nil, err
	}
	return d, nil
}
