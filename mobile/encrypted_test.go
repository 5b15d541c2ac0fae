package mobile

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenEncrypted: an encrypted store written, closed and reopened with
// its key; another key, or none, is CodeWrongKey (class unauthorized).
func TestOpenEncrypted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "enc.db")
	key := make([]byte, 32)
	rand.Read(key)
	dbs := &Databases{}
	d, err := dbs.OpenEncrypted(path, key, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Put(`{"_id":"a","note":"GOMARKER"}`); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("GOMARKER")) {
		t.Fatal("plaintext on disk")
	}
	if d, err = dbs.OpenEncrypted(path, key, true); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get("a"); err != nil {
		t.Fatal(err)
	}
	d.Close()
	wrong := bytes.Clone(key)
	wrong[0] ^= 1
	for _, open := range []func() (*Database, error){
		func() (*Database, error) { return dbs.OpenEncrypted(path, wrong, false) },
		func() (*Database, error) { return dbs.Open(path) },
	} {
		_, err := open()
		if ErrorCode(err) != CodeWrongKey || ErrorClass(err) != "unauthorized" {
			t.Fatalf("%v: code %q, class %q", err, ErrorCode(err), ErrorClass(err))
		}
	}
	if _, err := dbs.OpenEncrypted(path, key[:16], false); ErrorCode(err) != CodeBadRequest {
		t.Fatalf("short key: %v", err)
	}
}
