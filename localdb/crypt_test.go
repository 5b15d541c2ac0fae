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

// docIDs lists a store's document ids.
func docIDs(t *testing.T, path string, key []byte) string {
	t.Helper()
	db, err := localdb.Open(path, &localdb.Options{Key: key, NoCreate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ids []string
	if _, err := db.AllDocs(bg, localdb.AllDocsOptions{}, func(r *localdb.AllDocsRow) error {
		ids = append(ids, r.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, rc, err := db.OpenAttachment(bg, ids[0], "", "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
	return strings.Join(ids, ",")
}

// TestEncryptDecryptRekey: a plain store encrypted, rekeyed and decrypted
// keeps its documents; each step refuses the wrong key, and rekeying
// refuses a store open elsewhere.
func TestEncryptDecryptRekey(t *testing.T) {
	if localdb.SuiteKey() != nil {
		t.Skip("starts from a plain store")
	}
	dir := t.TempDir()
	plain, enc, back := filepath.Join(dir, "plain.db"), filepath.Join(dir, "enc.db"), filepath.Join(dir, "back.db")
	db, err := localdb.Open(plain, nil)
	if err != nil {
		t.Fatal(err)
	}
	putMarked(t, db, "PLAINMARK", 12)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	want := docIDs(t, plain, nil)
	k1, k2 := newKey(t), newKey(t)
	salt := []byte("saltsalt")
	if err := localdb.Encrypt(bg, plain, enc, k1, salt); err != nil {
		t.Fatal(err)
	}
	if got, err := localdb.StoreSalt(enc); err != nil || string(got) != string(salt) {
		t.Fatalf("salt %q, %v", got, err)
	}
	b, _ := os.ReadFile(enc)
	if bytes.Contains(b, []byte("PLAINMARK")) {
		t.Fatal("the encrypted copy holds plaintext")
	}
	if got := docIDs(t, enc, k1); got != want {
		t.Fatalf("encrypted: %s, want %s", got, want)
	}
	if err := localdb.Encrypt(bg, plain, enc, k1, nil); !errors.Is(err, couchdoc.ErrFileExists) {
		t.Fatalf("encrypt over an existing file: %v", err)
	}
	if err := localdb.Rekey(bg, enc, k2, k1, nil); !errors.Is(err, localdb.ErrWrongKey) {
		t.Fatalf("rekey with the wrong key: %v", err)
	}
	open, err := localdb.Open(enc, &localdb.Options{Key: k1})
	if err != nil {
		t.Fatal(err)
	}
	if err := localdb.Rekey(bg, enc, k1, k2, nil); err == nil {
		t.Fatal("rekeyed a store open elsewhere")
	}
	open.Close()
	if err := localdb.Rekey(bg, enc, k1, k2, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := localdb.Open(enc, &localdb.Options{Key: k1}); !errors.Is(err, localdb.ErrWrongKey) {
		t.Fatalf("old key after rekey: %v", err)
	}
	if got := docIDs(t, enc, k2); got != want {
		t.Fatalf("rekeyed: %s, want %s", got, want)
	}
	for _, s := range []string{"-wal", "-journal", ".crypt-tmp"} {
		if _, err := os.Stat(enc + s); err == nil {
			t.Errorf("%s left behind", s)
		}
	}
	if err := localdb.Decrypt(bg, enc, back, k1); !errors.Is(err, localdb.ErrWrongKey) {
		t.Fatalf("decrypt with the wrong key: %v", err)
	}
	if err := localdb.Decrypt(bg, enc, back, k2); err != nil {
		t.Fatal(err)
	}
	if got := docIDs(t, back, nil); got != want {
		t.Fatalf("decrypted: %s, want %s", got, want)
	}
}
