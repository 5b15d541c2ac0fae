package wire

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// endlessReader yields prefix, then filler forever.
type endlessReader struct {
	prefix string
	filler byte
	n      int64
}

func (e *endlessReader) Read(p []byte) (int, error) {
	if e.prefix != "" {
		n := copy(p, e.prefix)
		e.prefix = e.prefix[n:]
		return n, nil
	}
	if e.n > 256<<20 {
		return 0, io.EOF // a regression fails its test rather than hanging
	}
	for i := range p {
		p[i] = e.filler
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestEndlessValuesAreBounded: a server streaming one endless changes row
// or document gets couchdoc.ErrTooLarge after a bounded read, not an
// out-of-memory process.
func TestEndlessValuesAreBounded(t *testing.T) {
	defer func(c, j int64) { MaxChangesRow, MaxJSONPart = c, j }(MaxChangesRow, MaxJSONPart)
	MaxChangesRow, MaxJSONPart = 1<<20, 2<<20
	noRows := func(*couchdoc.Change) error { return nil }
	noDocs := func(*couchdoc.Doc, error) error { return nil }
	for name, c := range map[string]struct {
		prefix string
		read   func(r io.Reader) error
		max    int64
	}{
		"changes row":          {`{"results":[{"seq":1,"id":"`, func(r io.Reader) error { _, _, err := ReadChangesPending(r, noRows); return err }, MaxChangesRow},
		"changes extra member": {`{"junk":"`, func(r io.Reader) error { _, _, err := ReadChangesPending(r, noRows); return err }, MaxChangesRow},
		"continuous row":       {`{"seq":1,"id":"`, func(r io.Reader) error { _, err := ReadContinuousChanges(r, noRows); return err }, MaxChangesRow},
		"bulk_get doc":         {`{"results":[{"id":"x","docs":[{"ok":{"_id":"x","_rev":"1-a","big":"`, func(r io.Reader) error { return ReadBulkGet(r, noDocs) }, MaxJSONPart},
		"open_revs doc":        {`[{"ok":{"_id":"x","_rev":"1-a","big":"`, func(r io.Reader) error { return ReadOpenRevsJSON(r, noDocs) }, MaxJSONPart},
	} {
		t.Run(name, func(t *testing.T) {
			r := &endlessReader{prefix: c.prefix, filler: 'a'}
			err := c.read(r)
			if !errors.Is(err, couchdoc.ErrTooLarge) {
				t.Fatalf("got %v, want ErrTooLarge", err)
			}
			if r.n > 2*c.max {
				t.Fatalf("read %d bytes for a bound of %d", r.n, c.max)
			}
		})
	}
	// Rows below the bound still pass, however many.
	var rows []string
	for i := 0; i < 2000; i++ {
		rows = append(rows, `{"seq":1,"id":"`+strings.Repeat("x", 1000)+`","changes":[{"rev":"1-a"}]}`)
	}
	n := 0
	if _, _, err := ReadChangesPending(strings.NewReader(`{"results":[`+strings.Join(rows, ",")+`],"last_seq":1}`), func(*couchdoc.Change) error { n++; return nil }); err != nil || n != 2000 {
		t.Fatalf("a 2 MB feed of small rows: %d rows, %v", n, err)
	}
}

// TestEndlessAttachmentPart: a part longer than its attachment's declared
// length ends the answer with couchdoc.ErrDigestMismatch once the callback
// returns, instead of reading on to the next part (which may never come).
func TestEndlessAttachmentPart(t *testing.T) {
	for _, readBody := range []bool{true, false} {
		endlessAttachmentPart(t, readBody)
	}
}

func endlessAttachmentPart(t *testing.T, readBody bool) {
	r := &endlessReader{filler: 'z', prefix: "--outer\r\nContent-Type: multipart/related; boundary=\"inner\"\r\n\r\n" +
		"--inner\r\nContent-Type: application/json\r\n\r\n" +
		`{"_id":"x","_rev":"1-a","_attachments":{"f":{"content_type":"text/plain","revpos":1,"digest":"md5-XUFAKrxLKna5cZ2REBfFkg==","length":5,"follows":true}}}` +
		"\r\n--inner\r\nContent-Type: text/plain\r\n\r\n"}
	err := ReadMultipart(r, `multipart/mixed; boundary="outer"`, func(doc *couchdoc.Doc, _ error) error {
		if !readBody {
			return nil // a caller that does not need the bytes
		}
		_, err := io.Copy(io.Discard, doc.Attachments["f"].Body)
		if !errors.Is(err, couchdoc.ErrDigestMismatch) {
			t.Errorf("reading the body: %v, want a digest mismatch", err)
		}
		return nil // a caller that counts the document as failed and goes on
	})
	if !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Fatalf("body read %v: got %v, want ErrDigestMismatch", readBody, err)
	}
	if r.n > 1<<20 {
		t.Fatalf("read %d bytes of an endless part", r.n)
	}
}
