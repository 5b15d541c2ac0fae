package cryptvfs

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

func testKey(t testing.TB) []byte {
	k := make([]byte, 32)
	rand.Read(k)
	return k
}

// openTest makes a store at path through a new VFS and opens it.
func openTest(t testing.TB, path string, key []byte, create bool) (*VFS, *sql.DB) {
	t.Helper()
	v, err := New(key, 8192)
	if err != nil {
		t.Fatal(err)
	}
	if create {
		if err := v.Create(path, "PRAGMA auto_vacuum = INCREMENTAL", "PRAGMA journal_mode = WAL"); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", uri(path)+"?vfs="+v.Name()+"&_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		if err := v.Close(); err != nil {
			t.Error(err)
		}
	})
	return v, db
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	key := testKey(t)
	_, db := openTest(t, path, key, true)
	if _, err := db.Exec("CREATE TABLE t(k TEXT PRIMARY KEY, v BLOB)"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if _, err := db.Exec("INSERT INTO t VALUES (?, ?)", strings.Repeat("MARKERKEY", 3)+string(rune('a'+i%26))+strings.Repeat("x", i), bytes.Repeat([]byte("MARKERBLOB"), 100*i)); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	var sum int64
	if err := db.QueryRow("SELECT count(*), sum(length(v)) FROM t").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if n != 200 {
		t.Fatalf("count %d", n)
	}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("MARKER")) || bytes.Contains(b, []byte("SQLite format 3")) {
			t.Errorf("%s holds plaintext", path+suffix)
		}
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA integrity_check").Scan(new(string)); err != nil {
		t.Fatal(err)
	}
}

// fill makes a store at path with rows holding markers, closed.
func fill(t *testing.T, path string, key []byte, rows int) {
	t.Helper()
	v, db := openTest(t, path, key, true)
	if _, err := db.Exec("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < rows; i++ {
		if _, err := db.Exec("INSERT INTO t VALUES (?, ?)", i, bytes.Repeat([]byte("MARKER"), 50+i)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
}

func count(db *sql.DB) (int, error) {
	var n int
	err := db.QueryRow("SELECT count(*) FROM t").Scan(&n)
	return n, err
}

func TestReopenAndWrongKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	key := testKey(t)
	fill(t, path, key, 100)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if IsEncrypted(before) == false || bytes.HasPrefix(before, []byte("SQLite")) {
		t.Fatalf("header %q", before[:16])
	}
	v, db := openTest(t, path, testKey(t), false)
	if _, err := count(db); err == nil {
		t.Fatal("a wrong key read the store")
	}
	if f := v.Failure(); f == nil || f.Err != ErrWrongKey {
		t.Fatalf("failure %+v", f)
	}
	db.Close()
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatal("the wrong key changed the file")
	}
	_, db2 := openTest(t, path, key, false)
	if n, err := count(db2); err != nil || n != 100 {
		t.Fatalf("reopen: %d, %v", n, err)
	}
}

func TestFlippedBit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	key := testKey(t)
	fill(t, path, key, 60)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// One place in each page, and every byte of the header.
	var offs []int
	for i := 0; i < HeaderSize; i++ {
		offs = append(offs, i)
	}
	for p := 0; p < len(orig); p += 8192 {
		offs = append(offs, p+100+(p/8192*977)%8000, p+8191, p+8192-Reserve)
	}
	for _, off := range offs {
		b := bytes.Clone(orig)
		b[off] ^= 1 << (off % 8)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		v, err := New(key, 8192)
		if err != nil {
			t.Fatal(err)
		}
		db, _ := sql.Open("sqlite", uri(path)+"?vfs="+v.Name())
		var s string
		err = db.QueryRow("SELECT group_concat(length(v)) FROM t").Scan(&s)
		if err == nil {
			err = db.QueryRow("PRAGMA integrity_check").Scan(&s)
		}
		db.Close()
		f := v.Failure()
		v.Close()
		if (err == nil && s == "ok") || f == nil {
			t.Fatalf("bit flipped at %d: read gave %v, failure %+v", off, err, f)
		}
	}
}
