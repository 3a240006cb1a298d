package store

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Opening and creating a SQLite study database: the file checks that
// precede SQLite, and the creation that never exposes a half-made file.

// openSQLite opens the SQLite file at path and checks, migrates or (fresh)
// initializes it.
func openSQLite(path string, o Options, fresh bool) (*DB, error) {
	bt, retry := o.busy()
	sync := "NORMAL"
	if o.Durable {
		sync = "FULL"
	}
	// Writers take the lock at BEGIN (IMMEDIATE) so two writers never
	// deadlock upgrading read locks; foreign keys keep trials tied to studies.
	dsn := fmt.Sprintf("file:%s?_txlock=immediate&_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_pragma=synchronous(%s)",
		uriPath(path), bt.Milliseconds(), sync)
	if !fresh {
		dsn += "&mode=rw"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	d := &DB{conn: &conn{db: &sqlDB{DB: db}, path: path, busyRetry: retry, busyTimeout: bt, log: o.Logger}}
	if err := d.init(fresh, o.DeferMigration); err != nil {
		db.Close()
		return nil, err
	}
	return d, nil
}

// createSQLite makes a new, complete tesbo database at path, which did not
// exist. It builds the database in a file of its own beside path and links
// it into place only when done, so path is only ever absent or whole: two
// processes creating it at once (two runs started together in one
// directory) never open each other's half-made file, the second simply opens
// the first's, and a failure leaves nothing behind — nor removes a file
// another process may be using.
func createSQLite(path string, o Options) error {
	sweepStale(path, time.Now())
	// Not os.CreateTemp: its mode 0600 would hide the database from other
	// users SQLite would have let read it.
	tmp := fmt.Sprintf("%s.new-%d-%d", path, os.Getpid(), time.Now().UnixNano())
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	f.Close()
	defer removeDB(tmp)
	d, err := openSQLite(tmp, o, true)
	if err != nil {
		return err
	}
	// A clean close checkpoints the WAL into tmp and removes tmp-wal and
	// tmp-shm, so tmp alone is the database.
	if err := d.Close(); err != nil {
		return err
	}
	err = os.Link(tmp, path)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil // another process's, made meanwhile: open it
	case errors.Is(err, errors.ErrUnsupported), errors.Is(err, fs.ErrPermission):
		// A file system without hard links: rename instead, which replaces
		// a file made meanwhile, so check for one first (a narrow race on
		// such file systems only).
		if _, err := os.Lstat(path); err == nil {
			return nil
		}
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return err
	}
	if o.Durable {
		// The new name is a change to the directory, which synchronous=FULL
		// does not flush: without this a power loss could lose the whole
		// database file after its first commits were acknowledged.
		return syncDir(filepath.Dir(path))
	}
	return nil
}

// syncDir flushes the directory dir's entries to stable storage.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// staleTempAge is how old a creation's temporary file (createSQLite) must
// be before another creation removes it: a creation takes well under a
// second, even waiting out a busy timeout, so an older one belongs to a
// process that was killed while creating.
const staleTempAge = 10 * time.Minute

// sweepStale removes the temporary files, older than staleTempAge, that
// killed creations of path left beside it ("<path>.new-<pid>-<ns>" and
// their -wal/-shm). Errors are ignored: the files only take space.
func sweepStale(path string, now time.Time) {
	dir, prefix := filepath.Dir(path), filepath.Base(path)+".new-"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || e.IsDir() {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > staleTempAge {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// uriPath is path as the path of a file: URI, which SQLite percent-
// decodes: a '%' in a file name is written %25 (a path with %41 in its
// name opened ...A... instead; '?' and '#' are refused by Open).
func uriPath(path string) string { return strings.ReplaceAll(path, "%", "%25") }

// checkFile inspects path before SQLite touches it: it must be a SQLite file
// (or absent with create, or empty). It reports whether the file is new.
func checkFile(path string, create bool) (fresh bool, err error) {
	// Opening a FIFO blocks until a writer comes (and signals only cancel
	// a context): look before opening.
	if st, err := os.Stat(path); err == nil && !st.IsDir() && !st.Mode().IsRegular() {
		return false, fmt.Errorf("open study db %s: %w (not a regular file: %v)", path, ErrNotTesbo, st.Mode().Type())
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		if !create {
			return false, fmt.Errorf("open study db %s: no such file", path)
		}
		dir := "."
		if i := strings.LastIndexByte(path, os.PathSeparator); i >= 0 {
			dir = path[:i+1]
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return false, fmt.Errorf("open study db %s: directory %s does not exist", path, dir)
		}
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("open study db %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("open study db %s: %w", path, err)
	}
	if st.IsDir() {
		return false, fmt.Errorf("open study db %s: is a directory", path)
	}
	if st.Size() == 0 {
		return false, nil
	}
	hdr := make([]byte, len(sqliteHeader))
	if _, err := io.ReadFull(f, hdr); err != nil || !bytes.Equal(hdr, sqliteHeader) {
		return false, fmt.Errorf("open study db %s: %w (not an SQLite file)", path, ErrNotTesbo)
	}
	return false, nil
}

func removeDB(path string) {
	for _, s := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + s)
	}
}
