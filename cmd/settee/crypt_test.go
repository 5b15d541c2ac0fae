package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEncryptedStoreCLI: a store encrypted with a raw key and one with a
// passphrase work with --key-file and $SETTEE_KEY_FILE on the commands
// that open stores; a wrong or missing key exits 7 and changes nothing;
// decrypt and rekey give the documents back.
func TestEncryptedStoreCLI(t *testing.T) {
	dir := t.TempDir()
	raw := make([]byte, 32)
	rand.Read(raw)
	keyFile := filepath.Join(dir, "k.hex")
	passFile := filepath.Join(dir, "k.pass")
	wrongFile := filepath.Join(dir, "wrong.pass")
	for f, s := range map[string]string{keyFile: hex.EncodeToString(raw) + "\n", passFile: "correct horse battery staple\n", wrongFile: "incorrect horse\n"} {
		if err := os.WriteFile(f, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	plain := filepath.Join(dir, "plain.db")
	ok(t, "put", plain, `{"_id":"a","secret":"CLIMARKER"}`)
	for _, kf := range []string{keyFile, passFile} {
		enc := filepath.Join(dir, filepath.Base(kf)+".db")
		ok(t, "encrypt", "--key-file", kf, plain, enc)
		b, err := os.ReadFile(enc)
		if err != nil || bytes.Contains(b, []byte("CLIMARKER")) || bytes.HasPrefix(b, []byte("SQLite")) {
			t.Fatalf("%s: plaintext on disk (%v)", enc, err)
		}
		if out := ok(t, "get", "--key-file", kf, enc, "a"); !strings.Contains(out, "CLIMARKER") {
			t.Fatalf("get: %s", out)
		}
		if r := cli(t, []string{"SETTEE_KEY_FILE=" + kf}, "put", enc, `{"_id":"b"}`); r.code != 0 {
			t.Fatalf("put with $SETTEE_KEY_FILE: %d %s", r.code, r.stderr)
		}
		before, _ := os.ReadFile(enc)
		failsWith(t, cli(t, nil, "get", "--key-file", wrongFile, enc, "a"), exitWrongKey, enc)
		failsWith(t, cli(t, nil, "get", enc, "a"), exitWrongKey, "encrypted")
		failsWith(t, cli(t, nil, "get", "--key-file", kf, plain, "a"), exitWrongKey, "not encrypted")
		if after, _ := os.ReadFile(enc); !bytes.Equal(before, after) {
			t.Fatal("a wrong key changed the store")
		}
		ok(t, "check", "--key-file", kf, enc)
		// Compaction rewrites the file through the same encryption.
		ok(t, "compact", "--key-file", kf, enc)
		ok(t, "check", "--key-file", kf, enc)
		if b, _ := os.ReadFile(enc); bytes.Contains(b, []byte("CLIMARKER")) {
			t.Fatal("the compacted store shows its plaintext")
		}
		clone := enc + ".clone"
		ok(t, "clone", "--key-file", kf, enc, clone)
		if out := ok(t, "export", "--key-file", kf, clone); !strings.Contains(out, "CLIMARKER") {
			t.Fatalf("export of the clone: %s", out)
		}
		if kf == keyFile {
			// A served store stays encrypted on disk.
			url := serveBinary(t, clone, nil, "--key-file", kf)
			resp, err := http.Get(url + "/" + dbNameOf(clone) + "/a")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Contains(body, []byte("CLIMARKER")) {
				t.Fatalf("served: %d %s", resp.StatusCode, body)
			}
		}
		ok(t, "rekey", "--key-file", kf, enc, wrongFile)
		failsWith(t, cli(t, nil, "info", "--key-file", kf, enc), exitWrongKey)
		back := enc + ".plain"
		ok(t, "decrypt", "--key-file", wrongFile, enc, back)
		if out := ok(t, "get", back, "a"); !strings.Contains(out, "CLIMARKER") {
			t.Fatalf("decrypted: %s", out)
		}
	}
}
