package wire

import (
	"bytes"
	"errors"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// A document this side refuses (here a 32-byte rev id that is not hex,
// which CouchDB refuses too, and a _revisions that contradicts _rev) is a
// *RevError with Refused set, naming it; the documents around it are read.
const badRev = `1-zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz`

func wantRefused(t *testing.T, got []gotDoc, id, rev string) {
	t.Helper()
	if len(got) != 4 || got[0].doc == nil || got[0].doc.ID != "a" || got[3].doc == nil || got[3].doc.ID != "d" {
		t.Fatalf("got %+v", got)
	}
	var re *RevError
	if !errors.As(got[1].err, &re) || !re.Refused || re.ID != id || re.Rev != rev || !errors.Is(got[1].err, couchdoc.ErrBadRequest) {
		t.Fatalf("first refused: %#v", got[1].err)
	}
	if !errors.As(got[2].err, &re) || !re.Refused || re.ID != "c" {
		t.Fatalf("second refused: %#v", got[2].err)
	}
}

func TestReadBulkGetRefusedDoc(t *testing.T) {
	body := `{"results":[` +
		`{"id":"a","docs":[{"ok":{"_id":"a","_rev":"1-x"}}]},` +
		`{"id":"b","docs":[{"ok":{"_id":"b","_rev":"` + badRev + `","v":1}}]},` +
		`{"id":"c","docs":[{"ok":{"_id":"c","_rev":"2-y","_revisions":{"start":3,"ids":["y","x"]}}}]},` +
		`{"id":"d","docs":[{"ok":{"_id":"d","_rev":"1-"}}]}]}`
	fn, got := collect(t, nil)
	if err := ReadBulkGet(strings.NewReader(body), fn); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, *got, "b", badRev)
}

func TestReadOpenRevsRefusedDoc(t *testing.T) {
	body := `[{"ok":{"_id":"a","_rev":"1-x"}},{"ok":{"_id":"b","_rev":"` + badRev + `"}},` +
		`{"ok":{"_id":"c","_rev":"2-y","_revisions":{"start":3,"ids":["y","x"]}}},{"ok":{"_id":"d","_rev":"1-y"}}]`
	fn, got := collect(t, nil)
	if err := ReadOpenRevsJSON(strings.NewReader(body), fn); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, *got, "b", badRev)
}

// In multipart/mixed a part's JSON may even be broken: the part ends at
// its boundary, so only that document fails. A refused multipart/related
// document's attachment parts are skipped with it.
func TestReadMixedRefusedDoc(t *testing.T) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	jsonPart := func(s string) {
		w, err := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"application/json"}})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(s))
	}
	jsonPart(`{"_id":"a","_rev":"1-x"}`)
	// b: a multipart/related document whose rev is refused, attachment and all.
	var rel bytes.Buffer
	rw := multipart.NewWriter(&rel)
	p, _ := rw.CreatePart(textproto.MIMEHeader{"Content-Type": {"application/json"}})
	p.Write([]byte(`{"_id":"b","_rev":"` + badRev + `","_attachments":{"f.txt":{"content_type":"text/plain","length":5,"follows":true}}}`))
	p, _ = rw.CreatePart(textproto.MIMEHeader{"Content-Disposition": {`attachment; filename="f.txt"`}})
	p.Write([]byte("hello"))
	rw.Close()
	w, err := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {`multipart/related; boundary="` + rw.Boundary() + `"`}})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(rel.Bytes())
	jsonPart(`{"_id":"c","_rev":"1-x","v":[1,}`) // broken JSON
	jsonPart(`{"_id":"d","_rev":"3-z"}`)
	mw.Close()
	fn, got := collect(t, nil)
	if err := ReadMultipart(&buf, "multipart/mixed; boundary="+mw.Boundary(), fn); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, *got, "b", badRev)
}
