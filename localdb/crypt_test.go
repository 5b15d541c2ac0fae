package localdb_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

func newKey(t testing.TB) []byte {
	k := make([]byte, localdb.KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// dirFiles reads every file in dir.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// putMarked writes n documents whose bodies and attachments hold marker.
func putMarked(t *testing.T, db *localdb.DB, marker string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		doc := &couchdoc.Doc{ID: fmt.Sprintf("doc-%s-%d", marker, i),
			Body: json.RawMessage(fmt.Sprintf(`{"note":%q}`, strings.Repeat(marker+" ", 20+i))),
			Attachments: map[string]*couchdoc.Attachment{"a.txt": {ContentType: "text/plain",
				Data: bytes.Repeat([]byte("ATT"+marker), 30+i*40)}}}
		if _, err := db.Put(bg, doc); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEncryptedFilesHoldNoPlaintext greps every file an encrypted store
// leaves beside it, open and closed, for the markers its documents,
// ids and attachments hold.
func TestEncryptedFilesHoldNoPlaintext(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "enc.db")
	db, err := localdb.Open(path, &localdb.Options{Key: newKey(t)})
	if err != nil {
		t.Fatal(err)
	}
	putMarked(t, db, "ZEBRAQUILT", 40)
	check := func(when string) {
		files := dirFiles(t, dir)
		if len(files) == 0 {
			t.Fatal("no files")
		}
		for name, b := range files {
			for _, m := range []string{"ZEBRAQUILT", "SQLite format 3", "_attachments"} {
				if bytes.Contains(b, []byte(m)) {
					t.Errorf("%s: %s holds %q", when, name, m)
				}
			}
		}
	}
	check("open")
	if err := db.Compact(bg); err != nil {
		t.Fatal(err)
	}
	check("compacted")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	check("closed")
}

// TestEncryptedKeyErrors: a wrong key, no key, and a key for a plain
// store are errors of their own that change no byte.
func TestEncryptedKeyErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "enc.db")
	key := newKey(t)
	db, err := localdb.Open(path, &localdb.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	putMarked(t, db, "m", 5)
	// Left open, so the WAL holds the writes too.
	before := dirFiles(t, dir)
	if _, err := localdb.Open(path, &localdb.Options{Key: newKey(t)}); !errors.Is(err, localdb.ErrWrongKey) {
		t.Fatalf("wrong key: %v", err)
	}
	if localdb.SuiteKey() == nil {
		if _, err := localdb.Open(path, nil); !errors.Is(err, localdb.ErrNeedKey) {
			t.Fatalf("no key: %v", err)
		}
	}
	if _, err := localdb.Open(path, &localdb.Options{Key: key[:16]}); err == nil {
		t.Fatal("a 16-byte key opened the store")
	}
	after := dirFiles(t, dir)
	for name, b := range before {
		if name != filepath.Base(path)+"-shm" && !bytes.Equal(b, after[name]) {
			t.Errorf("%s changed", name)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = localdb.Open(path, &localdb.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get(bg, "doc-m-4", localdb.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	if localdb.SuiteKey() != nil {
		return // every store is encrypted in this pass
	}
	plain := filepath.Join(dir, "plain.db")
	p, err := localdb.Open(plain, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if _, err := localdb.Open(plain, &localdb.Options{Key: key}); !errors.Is(err, localdb.ErrPlainStore) {
		t.Fatalf("key for a plain store: %v", err)
	}
	if ok, err := localdb.Exists(bg, path); !ok || err != nil {
		t.Fatalf("Exists of an encrypted store: %v %v", ok, err)
	}
}

// TestEncryptedFlippedBit flips one bit in each page of a closed
// encrypted store, and in its header: each is an error on open or on
// reading the file, which names the store and, for a page, says it failed
// authentication.
func TestEncryptedFlippedBit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "enc.db")
	key := newKey(t)
	db, err := localdb.Open(path, &localdb.Options{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	putMarked(t, db, "m", 30)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatal("a WAL is left after close")
	}
	const ps = 8192
	offs := []int{0, 5, 15}
	for p := 0; p < len(orig); p += ps {
		offs = append(offs, p+16+(p/ps*4111)%(ps-16))
	}
	for _, off := range offs {
		b := bytes.Clone(orig)
		b[off] ^= 1 << (off % 8)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		err := readAll(path, key)
		switch {
		case off < 16 && (errors.Is(err, localdb.ErrWrongKey) || errors.Is(err, localdb.ErrNotStore)):
		case errors.Is(err, localdb.ErrAuthFailed) && strings.Contains(err.Error(), path) && strings.Contains(err.Error(), "failed authentication"):
		default:
			t.Errorf("bit flipped at %d (page %d): %v", off, off/ps+1, err)
		}
	}
}

// readAll opens the store and reads every page of it.
func readAll(path string, key []byte) error {
	db, err := localdb.Open(path, &localdb.Options{Key: key})
	if err != nil {
		return err
	}
	defer db.Close()
	res, err := db.IntegrityCheck(bg)
	if err != nil {
		return err
	}
	if len(res) != 1 || res[0] != "ok" {
		return fmt.Errorf("integrity: %v", res)
	}
	return nil
}
