package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cliIn runs the binary with stdin and returns what it printed.
func cliIn(t testing.TB, stdin []byte, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, settee, args...)
	cmd.Env = cleanEnv()
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("settee %v: %v", args, err)
	}
	return r
}

// TestAttachmentGetPut: raw bytes in and out, the content type guessed
// from the file name, CouchDB's revision rules.
func TestAttachmentGetPut(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.db")
	big := make([]byte, 300<<10) // streamed, not inline
	rand.Read(big)
	img := filepath.Join(dir, "photo.png")
	if err := os.WriteFile(img, big, 0o644); err != nil {
		t.Fatal(err)
	}
	var first okResult
	mustJSON(t, ok(t, "attachment", "put", a, "trip", "full.png", img), &first) // a new doc in a new store
	failsWith(t, cli(t, nil, "attachment", "put", a, "trip", "full.png", img), exitConflict, "conflict")
	failsWith(t, cli(t, nil, "attachment", "put", "--update", a, "trip", "x", filepath.Join(dir, "nope")), exitUsage, "nope")
	r := cliIn(t, []byte("hello"), "attachment", "put", "--rev", first.Rev, a, "trip", "note.txt", "-")
	if r.code != 0 {
		t.Fatalf("put from stdin: %d %s", r.code, r.stderr)
	}
	if got := ok(t, "attachment", "get", a, "trip", "full.png"); got != string(big) {
		t.Fatalf("get: %d bytes back, want %d", len(got), len(big))
	}
	out := filepath.Join(dir, "back.png")
	ok(t, "attachment", "get", a, "trip", "full.png", "--output", out)
	if b, _ := os.ReadFile(out); !bytes.Equal(b, big) {
		t.Fatal("--output wrote other bytes")
	}
	if got := ok(t, "attachment", "get", a, "trip", "note.txt"); got != "hello" {
		t.Fatalf("note.txt: %q", got)
	}
	var info struct {
		ContentType string `json:"content_type"`
		Length      int64  `json:"length"`
	}
	mustJSON(t, ok(t, "attachment", "get", a, "trip", "full.png", "--info"), &info)
	if info.ContentType != "image/png" || info.Length != int64(len(big)) {
		t.Fatalf("info: %+v", info)
	}
	mustJSON(t, ok(t, "attachment", "get", a, "trip", "note.txt", "--info"), &info)
	if info.ContentType != "application/octet-stream" {
		t.Fatalf("stdin's content type: %q", info.ContentType)
	}
	failsWith(t, cli(t, nil, "attachment", "get", a, "trip", "nope"), exitNotFound)
	failsWith(t, cli(t, nil, "attachment", "get", a, "trip"), exitUsage)
}

// TestExportImport: export writes every leaf (conflicts, deletions,
// attachments) and import rebuilds the same leaves: the export of the
// copy is the export of the original, and importing it again writes
// nothing new.
func TestExportImport(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	ok(t, "put", a, `{"_id":"plain","n":1}`)
	ok(t, "put", a, `{"_id":"gone"}`)
	ok(t, "delete", a, "gone")
	big := make([]byte, 100<<10)
	rand.Read(big)
	att := filepath.Join(dir, "blob.bin")
	os.WriteFile(att, big, 0o644)
	ok(t, "attachment", "put", a, "withatt", "blob.bin", att)
	// A conflict: the same document written on two stores and merged.
	c := filepath.Join(dir, "c.db")
	ok(t, "put", c, `{"_id":"plain","n":2}`)
	exp := ok(t, "export", c)
	if r := cliIn(t, []byte(exp), "import", a); r.code != 0 {
		t.Fatalf("import c into a: %d %s", r.code, r.stderr)
	}
	if out := ok(t, "conflicts", "--ids", a); out != "plain\n" {
		t.Fatalf("conflicts after the merge: %q", out)
	}
	exp = ok(t, "export", a)
	if n := strings.Count(exp, "\n"); n != 4 {
		t.Fatalf("export has %d lines, want 4 (2 leaves of plain, gone, withatt):\n%s", n, exp)
	}
	r := cliIn(t, []byte(exp), "import", b)
	if r.code != 0 {
		t.Fatalf("import: %d %s", r.code, r.stderr)
	}
	var st importStats
	mustJSON(t, r.stdout, &st)
	if st.Read != 4 || st.Written != 4 || st.Failed != 0 {
		t.Fatalf("import stats %+v", st)
	}
	if again := ok(t, "export", b); again != exp {
		t.Fatalf("the copy's export differs:\n%s\nwant:\n%s", again, exp)
	}
	seq := updateSeq(t, b)
	if r := cliIn(t, []byte(exp), "import", b); r.code != 0 || updateSeq(t, b) != seq {
		t.Fatalf("a second import changed the store: %d %s", r.code, r.stderr)
	}
	if got := ok(t, "attachment", "get", b, "withatt", "blob.bin"); got != string(big) {
		t.Fatal("the attachment did not round-trip")
	}
	// New edits: put's rules, an existing document without _rev is a conflict.
	r = cliIn(t, []byte("{\"_id\":\"new\"}\n\n{\"n\":3}\n{\"_id\":\"plain\"}\n"), "import", b)
	if r.code != exitConflict || !strings.Contains(r.stderr, "settee: import: line 4: plain: conflict") ||
		!strings.HasSuffix(r.stderr, "settee: import: 1 of 3 documents not written (first: line 4: plain: conflict: Document update conflict.)\n") {
		t.Fatalf("import with a conflict: %d %q", r.code, r.stderr)
	}
}

// TestImportBadInput: a bad line stops the import before anything is
// written, naming the line (exit 2).
func TestImportBadInput(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.db")
	ok(t, "put", a, `{"_id":"x"}`)
	seq := updateSeq(t, a)
	for _, in := range []string{
		"{\"_id\":\"a\"}\n{\"_id\":\"b\"}\nnot json\n",
		"{\"_id\":\"a\"}\n{\"_id\":\"b\"}\n{\"_id\":\"_bad\"}\n",
		"{\"_id\":\"a\"}\n{\"_id\":\"b\"}\n{\"_id\":\"c\",\"_rev\":\"zz\"}\n",
		"{\"_id\":\"a\"}\n{\"_id\":\"b\"}\n[1,2]\n",
	} {
		failsWith(t, cliIn(t, []byte(in), "import", a), exitUsage, "line 3", "nothing was written")
		if updateSeq(t, a) != seq {
			t.Fatalf("a refused import wrote to the store (%q)", in)
		}
	}
	failsWith(t, cliIn(t, []byte("nope\n"), "import", filepath.Join(dir, "new.db")), exitUsage, "line 1")
}

func updateSeq(t testing.TB, path string) int64 {
	t.Helper()
	var info struct {
		UpdateSeq int64 `json:"update_seq"`
	}
	if err := json.Unmarshal([]byte(ok(t, "info", path)), &info); err != nil {
		t.Fatal(err)
	}
	return info.UpdateSeq
}

// TestCheckDamaged: check passes a sound store; on a damaged one, a
// command's error and check both give the next step, and export
// --skip-unreadable saves what can still be read, which import writes
// into a new store.
func TestCheckDamaged(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.db")
	var lines []string
	for i := range 300 {
		lines = append(lines, `{"_id":"d`+strings.Repeat("0", 3-len(itoa(i)))+itoa(i)+`","text":"`+strings.Repeat("x", 300)+`"}`)
	}
	if r := cliIn(t, []byte(strings.Join(lines, "\n")), "import", a); r.code != 0 {
		t.Fatal(r.stderr)
	}
	var rep checkReport
	mustJSON(t, ok(t, "check", a), &rep)
	if !rep.OK || rep.Docs != 300 {
		t.Fatalf("check of a sound store: %+v", rep)
	}
	// Damage three pages at 70% of the file: some documents' bodies.
	f, err := os.OpenFile(a, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	junk := bytes.Repeat([]byte{0xA5}, 3*4096)
	if _, err := f.WriteAt(junk, (st.Size()/4096*7/10)*4096); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r := cli(t, nil, "check", a)
	failsWith(t, r, exitFailure, "is damaged", "Next:", "settee pull new.db URL")
	mustJSON(t, r.stdout, &rep)
	if rep.OK || rep.Next == "" || rep.NUnread == 0 {
		t.Fatalf("check of a damaged store: %+v", rep)
	}
	saved := cli(t, nil, "export", a, "--skip-unreadable")
	b := filepath.Join(dir, "b.db")
	if r := cliIn(t, []byte(saved.stdout), "import", b); r.code != 0 {
		t.Fatalf("import of the saved documents: %s", r.stderr)
	}
	if n := docCount(t, b); n == 0 || n != rep.Docs-rep.NUnread {
		t.Fatalf("saved %d documents, check said %d of %d readable", n, rep.Docs-rep.NUnread, rep.Docs)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
