package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

func readRows(t *testing.T, name string, continuous bool) ([]*couchdoc.Change, string, error) {
	t.Helper()
	resp := fixture(t, name)
	var rows []*couchdoc.Change
	fn := func(c *couchdoc.Change) error { rows = append(rows, c); return nil }
	var last []byte
	var err error
	if continuous {
		last, err = ReadContinuousChanges(resp.Body, fn)
	} else {
		last, _, err = ReadChangesPending(resp.Body, fn)
	}
	return rows, string(last), err
}

func TestReadChangesCouchDB3(t *testing.T) {
	for _, cont := range []bool{false, true} {
		name := "changes_normal.http"
		if cont {
			name = "changes_continuous.http"
		}
		rows, last, err := readRows(t, name, cont)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(rows) != 4 || !strings.HasPrefix(last, `"34-g1AAAAG3eJzLYWBg`) {
			t.Fatalf("%s: %d rows, last_seq %s", name, len(rows), last)
		}
		if string(rows[0].Seq) != `"1-g1AAAAG3eJzLYWBgYMlgTmGQT0lKzi9KdUhJMtbLSs1LLUst0k3KTcpNy8xL"` {
			t.Errorf("%s: seq not kept verbatim: %s", name, rows[0].Seq)
		}
		if !rows[2].Deleted || len(rows[2].Revs()) != 2 || rows[3].ID != "café/+?#%" {
			t.Errorf("%s: rows %+v %+v", name, rows[2], rows[3])
		}
	}
}

func TestReadChangesIntegerSeqs(t *testing.T) {
	body := `{"results":[{"seq":1,"id":"a","changes":[{"rev":"1-abc"}]},{"seq":2,"id":"b","changes":[{"rev":"1-def"}],"deleted":true,"doc":{"_id":"b"}}],"last_seq":2}`
	var n int
	last, _, err := ReadChangesPending(strings.NewReader(body), func(c *couchdoc.Change) error { n++; return nil })
	if err != nil || string(last) != "2" || n != 2 {
		t.Fatalf("last %s, n %d, err %v", last, n, err)
	}
	last, err = ReadContinuousChanges(strings.NewReader("\n"+`{"seq":1,"id":"a","changes":[{"rev":"1-abc"}]}`+"\n\n\n"+`{"last_seq":7}`+"\n"), func(*couchdoc.Change) error { return nil })
	if err != nil || string(last) != "7" {
		t.Fatalf("continuous: last %s, err %v", last, err)
	}
}

func TestReadChangesEmpty(t *testing.T) {
	rows, last, err := readRows(t, "changes_empty.http", false)
	if err != nil || len(rows) != 0 || last == "" {
		t.Fatalf("rows %d last %s err %v", len(rows), last, err)
	}
}

func TestReadChangesBroken(t *testing.T) {
	_, _, err := readRows(t, "changes_truncated.http", false)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated: %v", err)
	}
	_, _, err = readRows(t, "changes_garbled.http", false)
	// A garbled answer is malformed, answers 400, and is not the peer's
	// refusal of a request (couchdoc.ErrBadRequest) nor a digest mismatch.
	if !errors.Is(err, ErrMalformed) || couchdoc.StatusOf(err) != 400 ||
		errors.Is(err, couchdoc.ErrBadRequest) || errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Errorf("garbled: %v", err)
	}
	for _, body := range []string{``, `[]`, `{"results":[]}`, `{"results":[{"id":"a"}],"last_seq":1}`, `{"results":[],"last_seq":null}`, `{"results":{}}`} {
		if _, _, err := ReadChangesPending(strings.NewReader(body), func(*couchdoc.Change) error { return nil }); err == nil {
			t.Errorf("%q: no error", body)
		}
	}
	// a continuous feed that ends without last_seq returns the last row's seq
	last, err := ReadContinuousChanges(strings.NewReader(`{"seq":"5-x","id":"a","changes":[{"rev":"1-a"}]}`+"\n"), func(*couchdoc.Change) error { return nil })
	if !errors.Is(err, io.ErrUnexpectedEOF) || string(last) != `"5-x"` {
		t.Errorf("continuous cut: %s %v", last, err)
	}
	// an error line
	_, err = ReadContinuousChanges(strings.NewReader(`{"error":"unauthorized","reason":"no"}`+"\n"), func(*couchdoc.Change) error { return nil })
	if !errors.Is(err, couchdoc.ErrUnauthorized) {
		t.Errorf("error line: %v", err)
	}
}

func TestReadChangesCallbackError(t *testing.T) {
	stop := errors.New("stop")
	for _, cont := range []bool{false, true} {
		resp := fixture(t, map[bool]string{false: "changes_normal.http", true: "changes_continuous.http"}[cont])
		n := 0
		fn := func(*couchdoc.Change) error { n++; return stop }
		var err error
		if cont {
			_, err = ReadContinuousChanges(resp.Body, fn)
		} else {
			_, _, err = ReadChangesPending(resp.Body, fn)
		}
		if err != stop || n != 1 {
			t.Errorf("continuous=%v: err %v after %d rows", cont, err, n)
		}
	}
}

func TestBulkGetJSONFixture(t *testing.T) {
	resp := fixture(t, "bulk_get_json.http")
	var docs []*couchdoc.Doc
	var errs []error
	err := ReadBulkGet(resp.Body, func(d *couchdoc.Doc, e error) error {
		if d != nil {
			docs = append(docs, d)
		} else {
			errs = append(errs, e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || string(docs[0].Attachments["t.txt"].Data) != "tiny attachment" || !docs[1].Deleted {
		t.Fatalf("docs %+v", docs)
	}
	var re *RevError
	// PouchDB's form of a missing revision
	err = ReadBulkGet(strings.NewReader(`{"results":[{"id":"nope","docs":[{"missing":"1-abc"}]}]}`), func(d *couchdoc.Doc, e error) error {
		if !errors.As(e, &re) || re.ID != "nope" || re.Rev != "1-abc" || !errors.Is(e, couchdoc.ErrNotFound) {
			t.Errorf("pouchdb missing: %v", e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 2 || !errors.Is(errs[0], couchdoc.ErrNotFound) || !errors.Is(errs[1], couchdoc.ErrForbidden) ||
		!errors.As(errs[0], &re) || re.ID != "gone" {
		t.Fatalf("errs %v", errs)
	}
}

func TestOpenRevsJSON(t *testing.T) {
	body := `[{"ok":{"_id":"a","_rev":"1-abc","x":1}},{"missing":"2-def"}]`
	var n, missing int
	err := ReadDocs(strings.NewReader(body), "application/json", func(d *couchdoc.Doc, e error) error {
		if d != nil {
			n++
		} else if errors.Is(e, couchdoc.ErrNotFound) {
			missing++
		}
		return nil
	})
	if err != nil || n != 1 || missing != 1 {
		t.Fatalf("n %d missing %d err %v", n, missing, err)
	}
	// A document refused alone (its rev is not one) is an entry error.
	var refused *RevError
	err = ReadDocs(strings.NewReader(`[{"ok":{"_id":"a","_rev":"x"}}]`), "application/json", func(_ *couchdoc.Doc, e error) error {
		errors.As(e, &refused)
		return nil
	})
	if err != nil || refused == nil || !refused.Refused || refused.ID != "a" || refused.Rev != "x" {
		t.Fatalf("refused doc: %v %+v", err, refused)
	}
	for _, bad := range []string{`[{}]`, `[{"ok":{"_id":"a"}}`, `{`} {
		if err := ReadDocs(strings.NewReader(bad), "application/json", func(*couchdoc.Doc, error) error { return nil }); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestBulkDocsShapes(t *testing.T) {
	docs := []*couchdoc.Doc{{ID: "a", Rev: "1-abc", Body: []byte(`{"x":1}`), Revisions: &couchdoc.Revisions{Start: 1, IDs: []string{"abc"}}}}
	b, err := AppendBulkDocs(nil, docs, false)
	if err != nil || !bytes.HasSuffix(b, []byte(`],"new_edits":false}`)) || !bytes.Contains(b, []byte(`"_revisions":{"start":1,"ids":["abc"]}`)) {
		t.Fatalf("%s %v", b, err)
	}
	resp := fixture(t, "bulk_docs_errors.http")
	failed, err := ReadBulkDocsResult(resp.Body)
	if err != nil || len(failed) != 1 || !errors.Is(failed[0].Err(), couchdoc.ErrForbidden) {
		t.Fatalf("%+v %v", failed, err)
	}
	failed, err = ReadBulkDocsResult(strings.NewReader(`[{"ok":true,"id":"a","rev":"1-a"}]`))
	if err != nil || len(failed) != 0 {
		t.Fatalf("%+v %v", failed, err)
	}
	resp = fixture(t, "revs_diff.http")
	body, _ := io.ReadAll(resp.Body)
	rd, err := ParseRevsDiff(body)
	if err != nil || len(rd["b"].PossibleAncestors) != 1 || len(rd["a"].Missing) != 1 {
		t.Fatalf("%+v %v", rd, err)
	}
}

func TestErrorBodies(t *testing.T) {
	resp := fixture(t, "error_429.http")
	body, _ := io.ReadAll(resp.Body)
	e := ParseError(resp.StatusCode, body)
	if e.Status != 429 || e.Name != "too_many_requests" {
		t.Fatalf("%+v", e)
	}
	e = ParseError(502, []byte("<html>Bad Gateway</html>"))
	if e.Status != 502 || e.Name != "bad_gateway" {
		t.Fatalf("%+v", e)
	}
	if e := ParseError(404, nil); !errors.Is(e, couchdoc.ErrNotFound) {
		t.Fatalf("%+v", e)
	}
}

func TestVerifyInline(t *testing.T) {
	good := `{"_id":"a","_rev":"1-abc","_attachments":{"t":{"data":"aGVsbG8=","digest":"md5-XUFAKrxLKna5cZ2REBfFkg=="}}}`
	bad := strings.Replace(good, "aGVsbG8=", "aGVsbG9v", 1)
	// CouchDB's digest of a gzip-stored attachment is over the gzip bytes:
	// with "encoding": "gzip" the decoded inline body cannot be checked.
	gzipStored := strings.Replace(bad, `"digest"`, `"encoding":"gzip","digest"`, 1)
	for body, wantErr := range map[string]bool{good: false, bad: true, gzipStored: false} {
		err := ReadOpenRevsJSON(strings.NewReader("[{\"ok\":"+body+"}]"), func(*couchdoc.Doc, error) error { return nil })
		if errors.Is(err, couchdoc.ErrDigestMismatch) != wantErr {
			t.Errorf("%s: %v", body, err)
		}
	}
}

func TestReadChangesPending(t *testing.T) {
	cases := map[string]int64{
		`{"results":[],"last_seq":"5-x","pending":12}`: 12,
		`{"results":[],"pending":0,"last_seq":3}`:      0,
		`{"results":[],"last_seq":3}`:                  -1,
		`{"results":[],"last_seq":3,"pending":null}`:   -1,
		`{"results":[],"last_seq":3,"pending":"7"}`:    -1,
		`{"results":[],"last_seq":3,"pending":-2}`:     -1,
		`{"results":[],"last_seq":3,"pending":1.5}`:    -1,
	}
	// CouchDB 3's recorded answer, chunked as it came.
	resp := fixture(t, "changes_normal.http")
	if _, n, err := ReadChangesPending(resp.Body, func(*couchdoc.Change) error { return nil }); err != nil || n != 0 {
		t.Errorf("CouchDB 3 answer: pending %d, %v; want 0", n, err)
	}
	for body, want := range cases {
		_, got, err := ReadChangesPending(strings.NewReader(body), func(*couchdoc.Change) error { return nil })
		if err != nil || got != want {
			t.Errorf("%s: pending %d, %v; want %d", body, got, err, want)
		}
	}
}
