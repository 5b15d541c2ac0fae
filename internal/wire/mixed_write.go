package wire

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/settee/settee/couchdoc"
)

// MixedWriter writes a multipart/mixed body of documents, the answer of
// GET /{db}/{id}?open_revs=... and of POST /{db}/_bulk_get with
// Accept: multipart/mixed, as CouchDB 3 writes them:
//
//   - a document without attachment bytes is an application/json part;
//   - a document with attachment bytes is a nested multipart/related part
//     (see Related), with X-Doc-Id and X-Rev-Id headers when DocHeaders is
//     set (CouchDB sends them in _bulk_get answers, not in open_revs ones);
//   - a missing revision is an application/json; error="true" part holding
//     {"missing": rev} (open_revs) or {"id","rev","error","reason"}
//     (_bulk_get).
//
// Call Close to write the final boundary. Not safe for concurrent use.
type MixedWriter struct {
	// DocHeaders adds X-Doc-Id and X-Rev-Id to the parts of documents
	// with attachment bytes.
	DocHeaders bool

	w        io.Writer
	boundary string
	parts    int
	err      error
	buf      []byte // the last JSON part, reused
}

// NewMixedWriter returns a writer of a multipart/mixed body to w.
func NewMixedWriter(w io.Writer) *MixedWriter {
	return &MixedWriter{w: w, boundary: NewBoundary()}
}

// ContentType returns the Content-Type header value of the body.
func (m *MixedWriter) ContentType() string {
	return TypeMixed + `; boundary="` + m.boundary + `"`
}

func (m *MixedWriter) delim() string {
	if m.parts == 0 {
		return "--" + m.boundary + "\r\n"
	}
	return "\r\n--" + m.boundary + "\r\n"
}

func (m *MixedWriter) write(s ...[]byte) error {
	for _, b := range s {
		if m.err != nil {
			return m.err
		}
		_, m.err = m.w.Write(b)
	}
	return m.err
}

// WriteDoc writes one document, streaming its attachment bodies (see
// Related.WriteTo for the checks made on them).
func (m *MixedWriter) WriteDoc(doc *couchdoc.Doc) error {
	if m.err != nil {
		return m.err
	}
	if !HasFollows(doc) {
		// One buffer for all such parts, written at once: settee serve
		// writes a pull's _bulk_get answers through here, and a new
		// buffer per document was a tenth of what it allocated.
		buf := append(m.buf[:0], m.delim()...)
		buf = append(buf, "Content-Type: application/json\r\n\r\n"...)
		buf, err := doc.AppendJSON(buf)
		if err != nil {
			return err
		}
		if cap(buf) <= 1<<20 {
			m.buf = buf[:0]
		}
		err = m.write(buf)
		m.parts++
		return err
	}
	rel, err := NewRelated(doc)
	if err != nil {
		return err
	}
	var h strings.Builder
	h.WriteString(m.delim())
	if m.DocHeaders && headerSafe(doc.ID) {
		h.WriteString("X-Doc-Id: " + doc.ID + "\r\n")
	}
	if m.DocHeaders && headerSafe(doc.Rev) {
		h.WriteString("X-Rev-Id: " + doc.Rev + "\r\n")
	}
	h.WriteString("Content-Type: " + rel.ContentType() + "\r\n\r\n")
	if err := m.write([]byte(h.String())); err != nil {
		return err
	}
	m.parts++
	if _, err := rel.WriteTo(m.w); err != nil {
		m.err = err
		return err
	}
	return nil
}

func headerSafe(s string) bool {
	return s != "" && !strings.ContainsAny(s, "\r\n\x00")
}

// WriteMissing writes open_revs' {"missing": rev} part.
func (m *MixedWriter) WriteMissing(rev string) error {
	js, _ := json.Marshal(map[string]string{"missing": rev})
	err := m.write([]byte(m.delim()+`Content-Type: application/json; error="true"`+"\r\n\r\n"), js)
	m.parts++
	return err
}

// WriteRevError writes _bulk_get's error part {"id","rev","error","reason"}
// for one requested revision.
func (m *MixedWriter) WriteRevError(id, rev string, err error) error {
	var ce *couchdoc.Error
	if !errors.As(err, &ce) {
		ce = &couchdoc.Error{Name: "unknown_error", Reason: err.Error()}
	}
	js, _ := json.Marshal(BulkGetError{ID: id, Rev: rev, Error: ce.Name, Reason: ce.Reason})
	werr := m.write([]byte(m.delim()+`Content-Type: application/json; error="true"`+"\r\n\r\n"), js)
	m.parts++
	return werr
}

// Close writes the closing boundary. It does not close the underlying
// writer.
func (m *MixedWriter) Close() error {
	if m.parts == 0 {
		return m.write([]byte("--" + m.boundary + "--"))
	}
	return m.write([]byte("\r\n--" + m.boundary + "--"))
}
