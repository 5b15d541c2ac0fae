package cryptvfs

import (
	"fmt"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// Create makes an empty store at path (a missing or empty file): page 1
// of v's page size with Reserve bytes per page, after running pragmas
// (those that must precede the first page, such as auto_vacuum). A store
// opened through the VFS must have been made so: SQLite fixes a file's
// reserved bytes when it writes its first page.
func (v *VFS) Create(path string, pragmas ...string) (err error) {
	tls := libc.NewTLS()
	defer tls.Close()
	zPath, err := libc.CString(path)
	if err != nil {
		return err
	}
	defer libc.Xfree(tls, zPath)
	pdb := tls.Alloc(8)
	defer tls.Free(8)
	*(*uintptr)(ptr(pdb)) = 0
	rc := sqlite3.Xsqlite3_open_v2(tls, zPath, pdb, sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_CREATE, v.cname)
	db := *(*uintptr)(ptr(pdb))
	defer func() {
		if rc := sqlite3.Xsqlite3_close_v2(tls, db); rc != sqlite3.SQLITE_OK && err == nil {
			err = fmt.Errorf("cryptvfs: close %s: code %d", path, rc)
		}
	}()
	if rc != sqlite3.SQLITE_OK {
		return errOf(tls, db, rc, "open")
	}
	if err := exec(tls, db, fmt.Sprintf("PRAGMA page_size = %d", v.pageSize)); err != nil {
		return err
	}
	n := tls.Alloc(4)
	defer tls.Free(4)
	*(*int32)(ptr(n)) = Reserve
	main, err := libc.CString("main")
	if err != nil {
		return err
	}
	defer libc.Xfree(tls, main)
	if rc := sqlite3.Xsqlite3_file_control(tls, db, main, sqlite3.SQLITE_FCNTL_RESERVE_BYTES, n); rc != sqlite3.SQLITE_OK {
		return errOf(tls, db, rc, "reserve bytes")
	}
	for _, p := range pragmas {
		if err := exec(tls, db, p); err != nil {
			return err
		}
	}
	// Writing a header field makes SQLite write page 1.
	return exec(tls, db, "PRAGMA user_version = 0")
}

func exec(tls *libc.TLS, db uintptr, sql string) error {
	z, err := libc.CString(sql)
	if err != nil {
		return err
	}
	defer libc.Xfree(tls, z)
	if rc := sqlite3.Xsqlite3_exec(tls, db, z, 0, 0, 0); rc != sqlite3.SQLITE_OK {
		return errOf(tls, db, rc, sql)
	}
	return nil
}

func errOf(tls *libc.TLS, db uintptr, rc int32, what string) error {
	msg := ""
	if db != 0 {
		msg = libc.GoString(sqlite3.Xsqlite3_errmsg(tls, db))
	}
	return &CodeError{Code: int(rc), What: what, Msg: msg}
}

// CodeError is a SQLite error of Create.
type CodeError struct {
	Code      int
	What, Msg string
}

func (e *CodeError) Error() string {
	return fmt.Sprintf("cryptvfs: %s: %s (code %d)", e.What, e.Msg, e.Code)
}
