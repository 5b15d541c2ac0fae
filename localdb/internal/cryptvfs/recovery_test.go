package cryptvfs

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// crashCopy copies a database's files as they are on disk, while it is
// open, to a new folder: what a crash at this moment would leave (the
// -shm is left behind, as SQLite rebuilds it after a crash).
func crashCopy(t *testing.T, path string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy.db")
	for _, s := range []string{"", "-wal", "-journal"} {
		b, err := os.ReadFile(path + s)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst+s, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestRecoveryFromWAL: committed transactions that live only in the WAL
// are recovered after a crash (SQLite checks each frame's checksum, which
// covers the whole page as SQLite wrote it).
func TestRecoveryFromWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	key := testKey(t)
	_, db := openTest(t, path, key, true)
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("PRAGMA wal_autocheckpoint = 0"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if _, err := db.Exec("INSERT INTO t VALUES (?, randomblob(?))", i, 100*i); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("UPDATE t SET v = randomblob(300) WHERE k % 7 = ?", i%7); err != nil {
			t.Fatal(err)
		}
	}
	cp := crashCopy(t, path)
	if _, err := os.Stat(cp + "-wal"); err != nil {
		t.Fatal("no WAL to recover from")
	}
	_, db2 := openTest(t, cp, key, false)
	if n, err := count(db2); err != nil || n != 50 {
		t.Fatalf("recovered %d rows (%v), want 50", n, err)
	}
}

// TestRecoveryFromJournal: with a rollback journal, a transaction cut
// short after SQLite wrote some of its pages into the file is rolled
// back from the (encrypted) hot journal.
func TestRecoveryFromJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	key := testKey(t)
	v, err := New(key, 8192)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if err := v.Create(path, "PRAGMA journal_mode = DELETE"); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", uri(path)+"?vfs="+v.Name()+"&_pragma=cache_size(2)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		if _, err := db.Exec("INSERT INTO t VALUES (?, randomblob(2000))", i); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("UPDATE t SET v = randomblob(3000)"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("DELETE FROM t WHERE k >= 20"); err != nil {
		t.Fatal(err)
	}
	cp := crashCopy(t, path)
	tx.Rollback()
	if _, err := os.Stat(cp + "-journal"); err != nil {
		t.Fatal("no hot journal")
	}
	v2, err := New(key, 8192)
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	db2, err := sql.Open("sqlite", uri(cp)+"?vfs="+v2.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	var n, sum int
	if err := db2.QueryRow("SELECT count(*), sum(length(v)) FROM t").Scan(&n, &sum); err != nil || n != 40 || sum != 40*2000 {
		t.Fatalf("after the rollback: %d rows, %d bytes (%v); want 40, %d", n, sum, err, 40*2000)
	}
	var ok string
	if err := db2.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check: %q %v", ok, err)
	}
}
