package cryptvfs

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzVFS runs the same random writes (inserts, updates and deletes of
// blobs up to a few pages, rollbacks of spilled transactions, checkpoints,
// incremental vacuums that truncate the file, reopening) on a plain
// database and on an encrypted one, and compares their contents after
// each step. The first byte picks the journal: WAL, or a rollback
// journal that a tiny page cache makes SQLite write and read back.
func FuzzVFS(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add([]byte{1, 0, 200, 0, 201, 4, 3, 0, 7, 2, 9, 5, 250, 6, 1})
	f.Add(bytes.Repeat([]byte{1, 0, 255, 4}, 5))
	f.Add(bytes.Repeat([]byte{0, 0, 255, 7, 5}, 4))
	f.Fuzz(runFuzzOnce)
}

func runFuzzOnce(t *testing.T, ops []byte) {
	key := sha256.Sum256([]byte("fuzz"))
	{
		if len(ops) == 0 || len(ops) > 25 {
			return
		}
		dir := t.TempDir()
		v, err := New(key[:], 8192)
		if err != nil {
			t.Fatal(err)
		}
		defer v.Close()
		mode := "WAL"
		if ops[0]%2 == 1 {
			mode = "DELETE"
		}
		ops = ops[1:]
		encPath, plainPath := filepath.Join(dir, "e.db"), filepath.Join(dir, "p.db")
		if err := v.Create(encPath, "PRAGMA auto_vacuum = INCREMENTAL", "PRAGMA journal_mode = "+mode); err != nil {
			t.Fatal(err)
		}
		params := "&_pragma=journal_mode(" + mode + ")&_pragma=cache_size(2)&_pragma=auto_vacuum(2)&_pragma=page_size(8192)"
		open := func() (*sql.DB, *sql.DB) {
			e, err := sql.Open("sqlite", uri(encPath)+"?vfs="+v.Name()+params)
			if err != nil {
				t.Fatal(err)
			}
			p, err := sql.Open("sqlite", uri(plainPath)+"?"+params[1:])
			if err != nil {
				t.Fatal(err)
			}
			e.SetMaxOpenConns(1)
			p.SetMaxOpenConns(1)
			return e, p
		}
		e, p := open()
		defer func() { e.Close(); p.Close() }()
		both := func(q string, args ...any) {
			_, err1 := e.Exec(q, args...)
			_, err2 := p.Exec(q, args...)
			if (err1 == nil) != (err2 == nil) {
				h, _ := os.ReadFile(encPath)
				t.Fatalf("%s: encrypted %v (%+v), plain %v; %q", q, err1, v.Failure(), err2, h[:min(len(h), 32)])
			}
		}
		both("CREATE TABLE t(k INTEGER PRIMARY KEY, v BLOB)")
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%8, int(ops[i+1])
			k := arg % 32
			blob := bytes.Repeat([]byte{byte(arg)}, arg*50)
			switch op {
			case 0, 1:
				both("INSERT OR REPLACE INTO t VALUES (?, ?)", k, blob)
			case 2:
				both("DELETE FROM t WHERE k >= ?", k)
			case 3:
				both("UPDATE t SET v = v || ? WHERE k % 3 = ?", blob[:min(len(blob), 5000)], k%3)
			case 4:
				// A transaction big enough to spill, rolled back.
				for _, c := range []*sql.DB{e, p} {
					tx, err := c.Begin()
					if err != nil {
						t.Fatal(err)
					}
					for j := 0; j < 4; j++ {
						if _, err := tx.Exec("INSERT OR REPLACE INTO t VALUES (?, zeroblob(?))", 100+j, 9000+arg); err != nil {
							t.Fatal(err)
						}
					}
					if err := tx.Rollback(); err != nil {
						t.Fatal(err)
					}
				}
			case 5:
				both("PRAGMA incremental_vacuum")
			case 6:
				if mode == "WAL" {
					both("PRAGMA wal_checkpoint(TRUNCATE)")
				}
			case 7:
				e.Close()
				p.Close()
				e, p = open()
			}
			compare(t, e, p)
		}
		var ok string
		if err := e.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
			t.Fatalf("integrity_check: %q, %v", ok, err)
		}
	}
}

func compare(t *testing.T, e, p *sql.DB) {
	t.Helper()
	digest := func(db *sql.DB) [32]byte {
		rows, err := db.Query("SELECT k, v FROM t ORDER BY k")
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		defer rows.Close()
		h := sha256.New()
		for rows.Next() {
			var k int64
			var v []byte
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatalf("read: %v", err)
			}
			fmt.Fprintf(h, "%d:%d:", k, len(v))
			h.Write(v)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("read: %v", err)
		}
		return [32]byte(h.Sum(nil))
	}
	if digest(e) != digest(p) {
		t.Fatal("encrypted and plain differ")
	}
}

// uri is path as a file: URI (a subtest's name puts '#' in its TempDir).
func uri(path string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}
