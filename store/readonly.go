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
// works in a read-only directory or on a read-only mount, where a
// read-write open fails with "attempt to write a readonly database".
//
// mode=ro is tried first: it reads a database that other processes are
// writing, seeing their commits (the live view 'serve' gives). In WAL mode
// SQLite needs the -shm file beside the database for that, and creates it
// when it is missing; where it cannot (a read-only directory holding a
// cleanly closed database, which has no -shm), the open fails with
// SQLITE_CANTOPEN and the file is opened immutable=1 instead: SQLite then
// takes no locks and reads the file as it is, which is exact for a
// database nobody can be writing through this mount, but does not see
// changes made through another one while it is open (logged as a warning).
func openSQLiteReadOnly(path string, o Options) (*DB, error) {
	if o.Create {
		return nil, fmt.Errorf("open study db %s: read-only and create exclude each other", path)
	}
	if _, err := checkFile(path, false); err != nil {
		return nil, err
	}
	d, err := openSQLiteMode(path, o, "mode=ro")
	if err == nil {
		return d, nil
	}
	var se *sqlite.Error
	if !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_CANTOPEN {
		return nil, fmt.Errorf("open study db %s: %w", path, classify(err))
	}
	d, ierr := openSQLiteMode(path, o, "immutable=1")
	if ierr != nil {
		return nil, fmt.Errorf("open study db %s: %w", path, classify(ierr))
	}
	o.Logger.Warn().Str("db", path).Msg("opened the study database immutable (it is in a directory this process cannot write): changes other processes make to it are not seen until it is opened again")
	return d, nil
}

// openSQLiteMode opens path read-only with the URI parameter param
// (mode=ro or immutable=1) and checks its schema. It returns SQLite's
// error unclassified, so that the caller can tell SQLITE_CANTOPEN.
func openSQLiteMode(path string, o Options, param string) (*DB, error) {
	bt, _ := o.busy()
	dsn := fmt.Sprintf("file:%s?%s&_pragma=busy_timeout(%d)", path, param, bt.Milliseconds())
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
