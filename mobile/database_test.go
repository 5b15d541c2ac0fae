package mobile

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
)

func openTest(t *testing.T) *Database {
	t.Helper()
	d, err := Open(filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.db.CheckInvariants(context.Background()); err != nil && d.check() == nil {
			t.Errorf("invariants: %v", err)
		}
		if err := d.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return d
}

func mustJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not a JSON object: %q: %v", s, err)
	}
	return m
}

func TestPutGetDelete(t *testing.T) {
	d := openTest(t)
	rev1, err := d.Put(`{"_id":"a","n":1}`)
	if err != nil {
		t.Fatal(err)
	}
	got := mustJSON(t, must(d.Get("a")))
	if got["_id"] != "a" || got["_rev"] != rev1 || got["n"] != 1.0 {
		t.Fatalf("Get = %v", got)
	}
	if _, err := d.Put(`{"_id":"a","n":2}`); err == nil || !strings.HasPrefix(err.Error(), "conflict") {
		t.Fatalf("update without _rev: err = %v, want conflict", err)
	}
	rev2, err := d.Put(`{"_id":"a","_rev":"` + rev1 + `","n":2}`)
	if err != nil {
		t.Fatal(err)
	}
	if old := mustJSON(t, must(d.GetRev("a", rev1))); old["n"] != 1.0 {
		t.Errorf("GetRev(rev1) = %v", old)
	}
	rev3, err := d.Delete("a", rev2)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rev3, "3-") {
		t.Errorf("tombstone rev = %q", rev3)
	}
	if _, err := d.Get("a"); err == nil || !strings.HasPrefix(err.Error(), "not_found") {
		t.Fatalf("Get deleted: err = %v, want not_found", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestBadInput(t *testing.T) {
	d := openTest(t)
	for _, js := range []string{`{"n":1}`, `[1]`, `{"_id":"x",`, `{"_id":"x","_bogus":1}`} {
		if _, err := d.Put(js); err == nil {
			t.Errorf("Put(%s) succeeded", js)
		}
	}
	if _, err := d.AllDocs(`{"limt":1}`); err == nil || !strings.HasPrefix(err.Error(), "bad_request") {
		t.Errorf("AllDocs with a misspelt option: err = %v", err)
	}
	if info := mustJSON(t, must(d.Info())); info["doc_count"] != 0.0 {
		t.Errorf("bad input changed the store: %v", info)
	}
}

func TestJSONShapes(t *testing.T) {
	d := openTest(t)
	for _, id := range []string{"b", "a", "c"} {
		if _, err := d.Put(`{"_id":"` + id + `"}`); err != nil {
			t.Fatal(err)
		}
	}
	var all struct {
		TotalRows int64 `json:"total_rows"`
		Offset    int   `json:"offset"`
		Rows      []struct {
			ID, Key string
			Value   struct{ Rev string }
			Doc     map[string]any
		}
	}
	if err := json.Unmarshal([]byte(must(d.AllDocs(`{"startkey":"b","include_docs":true}`))), &all); err != nil {
		t.Fatal(err)
	}
	if all.TotalRows != 3 || len(all.Rows) != 2 || all.Rows[0].ID != "b" || all.Rows[1].Key != "c" ||
		!strings.HasPrefix(all.Rows[0].Value.Rev, "1-") || all.Rows[0].Doc["_id"] != "b" {
		t.Fatalf("AllDocs = %+v", all)
	}
	keys := mustJSON(t, must(d.AllDocs(`{"keys":["a","zz"]}`)))
	rows := keys["rows"].([]any)
	if len(rows) != 2 || rows[1].(map[string]any)["error"] != "not_found" || rows[1].(map[string]any)["key"] != "zz" {
		t.Fatalf("AllDocs keys = %v", keys)
	}
	if empty := mustJSON(t, must(d.AllDocs(`{"startkey":"x"}`))); len(empty["rows"].([]any)) != 0 {
		t.Fatalf("rows of an empty range = %v", empty)
	}

	var ch struct {
		Results []struct {
			Seq     int64
			ID      string
			Changes []struct{ Rev string }
		}
		LastSeq int64 `json:"last_seq"`
	}
	if err := json.Unmarshal([]byte(must(d.Changes(1, 1))), &ch); err != nil {
		t.Fatal(err)
	}
	if len(ch.Results) != 1 || ch.Results[0].ID != "a" || ch.Results[0].Seq != 2 || ch.LastSeq != 2 || len(ch.Results[0].Changes) != 1 {
		t.Fatalf("Changes(1,1) = %+v", ch)
	}
	info := mustJSON(t, must(d.Info()))
	if info["doc_count"] != 3.0 || info["update_seq"] != 3.0 || info["uuid"] == "" {
		t.Fatalf("Info = %v", info)
	}
}

// A Database the app constructed itself (gobind gives Java and ObjC a
// no-argument constructor) and a closed one answer with errors, never
// panics.
func TestZeroAndClosedDatabase(t *testing.T) {
	closed := openTest(t)
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]*Database{"zero": {}, "closed": closed} {
		if _, err := d.Get("a"); err == nil {
			t.Errorf("%s: Get succeeded", name)
		}
		if _, err := d.Put(`{"_id":"a"}`); err == nil {
			t.Errorf("%s: Put succeeded", name)
		}
		if _, err := d.AddChangeListener(listenerFunc(func(string) {})); err == nil {
			t.Errorf("%s: AddChangeListener succeeded", name)
		}
		if _, err := NewReplicator(d, NewReplicatorConfig("http://127.0.0.1:1/db")); err == nil {
			t.Errorf("%s: NewReplicator succeeded", name)
		}
		if d.Path() != "" {
			t.Errorf("%s: Path = %q", name, d.Path())
		}
		if err := d.Close(); err != nil {
			t.Errorf("%s: Close = %v", name, err)
		}
	}
	var r AttachmentReader
	if _, err := r.Read(10); err == nil || r.ContentType() != "" {
		t.Error("zero AttachmentReader: Read succeeded")
	}
}

func TestAttachments(t *testing.T) {
	d := openTest(t)
	rev1, err := d.PutAttachment("doc", "", "hello.txt", "text/plain", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("0123456789abcdef", 20000) // 320 000 bytes
	src := &chunkSource{data: []byte(big), chunk: 7000}
	rev2, err := d.PutAttachmentFrom("doc", rev1, "big.bin", "application/octet-stream", src)
	if err != nil {
		t.Fatal(err)
	}
	if src.calls < 2 {
		t.Errorf("the source was read in %d calls, want chunks", src.calls)
	}
	if got := string(must(d.GetAttachment("doc", "", "hello.txt"))); got != "hello" {
		t.Errorf("hello.txt = %q", got)
	}
	r, err := d.OpenAttachment("doc", rev2, "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	if r.Length() != int64(len(big)) || r.ContentType() != "application/octet-stream" || !strings.HasPrefix(r.Digest(), "md5-") {
		t.Errorf("metadata: %d %q %q", r.Length(), r.ContentType(), r.Digest())
	}
	var got []byte
	for {
		b := must(r.Read(50000))
		if len(b) == 0 {
			break
		}
		got = append(got, b...)
	}
	if string(got) != big {
		t.Errorf("streamed %d bytes, want %d", len(got), len(big))
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	doc := mustJSON(t, must(d.Get("doc")))
	atts := doc["_attachments"].(map[string]any)
	if len(atts) != 2 || atts["hello.txt"].(map[string]any)["stub"] != true {
		t.Errorf("_attachments = %v", atts)
	}
	rev3, err := d.DeleteAttachment("doc", rev2, "hello.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.GetAttachment("doc", rev3, "hello.txt"); err == nil || !strings.HasPrefix(err.Error(), "not_found") {
		t.Errorf("deleted attachment: err = %v", err)
	}
	if _, err := d.PutAttachmentFrom("doc", rev3, "x", "text/plain", &chunkSource{fail: true}); err == nil {
		t.Error("a failing source did not fail the write")
	}
	if now := mustJSON(t, must(d.Get("doc"))); now["_rev"] != rev3 {
		t.Errorf("a failed write changed the document: %v", now)
	}
}

type chunkSource struct {
	data  []byte
	chunk int
	calls int
	fail  bool
}

func (s *chunkSource) Read(n int64) ([]byte, error) {
	s.calls++
	if s.fail {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "app source failed")
	}
	k := min(int(n), s.chunk, len(s.data))
	b := s.data[:k]
	s.data = s.data[k:]
	return b, nil
}

type listenerFunc func(string)

func (f listenerFunc) OnChange(js string) { f(js) }

func TestChangeListenerTokens(t *testing.T) {
	d := openTest(t)
	if _, err := d.Put(`{"_id":"before"}`); err != nil {
		t.Fatal(err)
	}
	a, b := make(chan string, 10), make(chan string, 10)
	ta := must(d.AddChangeListener(listenerFunc(func(js string) { a <- js })))
	tb := must(d.AddChangeListener(listenerFunc(func(js string) { b <- js })))
	if ta == tb {
		t.Fatal("tokens are equal")
	}
	rev := must(d.Put(`{"_id":"x"}`))
	for _, c := range []chan string{a, b} {
		row := mustJSON(t, waitFor(t, c))
		if row["id"] != "x" || row["seq"] != 2.0 {
			t.Fatalf("change = %v", row)
		}
		if revs := row["changes"].([]any); revs[0].(map[string]any)["rev"] != rev {
			t.Fatalf("change revs = %v", revs)
		}
	}
	d.RemoveChangeListener(ta)
	ta.Remove()                 // twice: ignored
	d.RemoveChangeListener(nil) // no token: ignored
	must(d.Delete("x", rev))
	if row := mustJSON(t, waitFor(t, b)); row["deleted"] != true {
		t.Fatalf("delete change = %v", row)
	}
	select {
	case js := <-a:
		t.Fatalf("removed listener called with %s", js)
	default:
	}
	tb.Remove()
	// A new listener after all were removed starts a new watcher.
	c := make(chan string, 10)
	must(d.AddChangeListener(listenerFunc(func(js string) { c <- js })))
	must(d.Put(`{"_id":"y"}`))
	if row := mustJSON(t, waitFor(t, c)); row["id"] != "y" {
		t.Fatalf("change = %v", row)
	}
}

// TestListenerHearsOtherWriters: a change listener hears writes made
// through another Database on the same file in this process, not only its
// own.
func TestListenerHearsOtherWriters(t *testing.T) {
	d := openTest(t)
	other, err := Open(d.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	c := make(chan string, 10)
	must(d.AddChangeListener(listenerFunc(func(js string) { c <- js })))
	must(other.Put(`{"_id":"from-other"}`))
	if row := mustJSON(t, waitFor(t, c)); row["id"] != "from-other" {
		t.Fatalf("change = %v", row)
	}
}

func TestPanickingListener(t *testing.T) {
	d := openTest(t)
	l := useLogger(t, LevelError)
	ok := make(chan string, 10)
	must(d.AddChangeListener(listenerFunc(func(string) { panic("app bug") })))
	must(d.AddChangeListener(listenerFunc(func(js string) { ok <- js })))
	must(d.Put(`{"_id":"a"}`))
	must(d.Put(`{"_id":"b"}`))
	waitFor(t, ok)
	waitFor(t, ok) // the watcher survived the panic
	if !strings.Contains(l.all(), "app bug") {
		t.Errorf("the listener's panic was not logged: %q", l.all())
	}
}

// waitFor returns the next value of c; a bounded wait, not a timing
// assertion: the value is expected well within it.
func waitFor(t *testing.T, c chan string) string {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(20 * time.Second):
		t.Fatal("timed out waiting for a callback")
		return ""
	}
}

// TestListenerOtherProcess: a store opened with OpenShared hears another
// process's writes within a second; one opened with Open (nothing runs
// while nobody writes) does not.
func TestListenerOtherProcess(t *testing.T) {
	for _, shared := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "s.db")
		openFn := Open
		if shared {
			openFn = OpenShared
		}
		d, err := openFn(path)
		if err != nil {
			t.Fatal(err)
		}
		c := make(chan string, 10)
		must(d.AddChangeListener(listenerFunc(func(js string) { c <- js })))
		must(d.Put(`{"_id":"own"}`))
		waitFor(t, c)
		cmd := exec.Command(os.Args[0], "-test.run=^TestListenerWriterProcess$")
		cmd.Env = append(os.Environ(), "SETTEE_TEST_WRITE="+path)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("writer process: %v\n%s", err, out)
		}
		select {
		case js := <-c:
			if !shared {
				t.Fatalf("Open heard another process's write: %s", js)
			}
		case <-time.After(1500 * time.Millisecond):
			if shared {
				t.Fatal("OpenShared did not hear another process's write within 1.5 s")
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestListenerWriterProcess is the other process of
// TestListenerOtherProcess.
func TestListenerWriterProcess(t *testing.T) {
	path := os.Getenv("SETTEE_TEST_WRITE")
	if path == "" {
		t.Skip("run by TestListenerOtherProcess")
	}
	d, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	must(d.Put(`{"_id":"other-process"}`))
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
