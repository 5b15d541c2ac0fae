package wire

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"

	"github.com/settee/settee/couchdoc"
)

// Content types of CouchDB document bodies.
const (
	TypeJSON    = "application/json"
	TypeRelated = "multipart/related"
	TypeMixed   = "multipart/mixed"
)

// NewBoundary returns a random multipart boundary (32 hex digits, like
// CouchDB's uuids).
func NewBoundary() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// HasFollows reports whether writing doc needs a multipart body: it has an
// attachment that is not a stub (its bytes travel as a part).
func HasFollows(doc *couchdoc.Doc) bool {
	for _, a := range doc.Attachments {
		if !a.Stub {
			return true
		}
	}
	return false
}

// Related is one document prepared to be written as a multipart/related
// body, the form of PUT /{db}/{id}?new_edits=false with attachments and of
// GET /{db}/{id}?attachments=true with Accept: multipart/related.
//
// The first part is the document's JSON in which every non-stub attachment
// is marked "follows": true; one part per such attachment follows, in the
// order of the "follows" entries in the JSON, each with CouchDB's
// Content-Disposition, Content-Type and Content-Length headers. Inline Data
// is written from memory; a Body is streamed (and checked against the
// attachment's Length and md5 Digest while it is copied).
type Related struct {
	boundary string
	json     []byte
	atts     []*couchdoc.Attachment // parts in "follows" order
	heads    [][]byte               // part headers, parallel to atts
}

// NewRelated prepares doc. Every streamed attachment (Body set) must carry
// its Length. It does no I/O and does not read any Body.
func NewRelated(doc *couchdoc.Doc) (*Related, error) {
	return newRelated(doc, NewBoundary())
}

func newRelated(doc *couchdoc.Doc, boundary string) (*Related, error) {
	cp := *doc
	cp.Attachments = make(map[string]*couchdoc.Attachment, len(doc.Attachments))
	for name, a := range doc.Attachments {
		ac := *a
		if ac.Name == "" {
			ac.Name = name
		}
		if !ac.Stub {
			if ac.Body == nil && ac.Data == nil && ac.Length > 0 {
				return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "attachment %q has no Data and no Body", name)
			}
			if ac.Body == nil {
				ac.Length = int64(len(ac.Data))
			}
			if ac.Length < 0 {
				return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "attachment %q has no length", name)
			}
			ac.Follows = true
		}
		cp.Attachments[name] = &ac
	}
	if len(cp.Attachments) == 0 {
		cp.Attachments = nil
	}
	js, err := cp.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode document: %w", err)
	}
	order, err := followsOrder(js)
	if err != nil {
		return nil, err
	}
	r := &Related{boundary: boundary, json: js}
	for _, f := range order {
		a := cp.Attachments[f.name]
		r.atts = append(r.atts, a)
		r.heads = append(r.heads, attHeader(boundary, a))
	}
	return r, nil
}

// attHeader is the delimiter and headers before an attachment part.
func attHeader(boundary string, a *couchdoc.Attachment) []byte {
	var b strings.Builder
	b.WriteString("\r\n--")
	b.WriteString(boundary)
	b.WriteString("\r\nContent-Disposition: attachment; filename=")
	b.WriteString(quote(a.Name))
	ct := a.ContentType
	if ct == "" || strings.ContainsAny(ct, "\r\n") {
		ct = "application/octet-stream"
	}
	b.WriteString("\r\nContent-Type: ")
	b.WriteString(ct)
	b.WriteString("\r\nContent-Length: ")
	b.WriteString(strconv.FormatInt(a.Length, 10))
	b.WriteString("\r\n\r\n")
	return []byte(b.String())
}

// quote makes an RFC 2045 quoted-string; CR and LF, which no header may
// hold, become spaces (the reader matches parts by order anyway).
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\r', '\n':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ContentType returns the Content-Type header value of the body.
func (r *Related) ContentType() string {
	return TypeRelated + `; boundary="` + r.boundary + `"`
}

// Len returns the exact length of the body WriteTo writes, for a
// Content-Length header.
func (r *Related) Len() int64 {
	n := int64(len(r.openJSON()) + len(r.json))
	for i, a := range r.atts {
		n += int64(len(r.heads[i])) + a.Length
	}
	return n + int64(len(r.closing()))
}

func (r *Related) openJSON() string {
	return "--" + r.boundary + "\r\nContent-Type: application/json\r\n\r\n"
}

func (r *Related) closing() string { return "\r\n--" + r.boundary + "--" }

// WriteTo writes the body, streaming attachment bodies. A Body that yields
// more or fewer bytes than its Length, or bytes whose md5 does not match
// its Digest, stops the write with couchdoc.ErrDigestMismatch (the receiver
// sees a truncated body and stores nothing).
func (r *Related) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	if _, err := io.WriteString(cw, r.openJSON()); err != nil {
		return cw.n, err
	}
	if _, err := cw.Write(r.json); err != nil {
		return cw.n, err
	}
	for i, a := range r.atts {
		if _, err := cw.Write(r.heads[i]); err != nil {
			return cw.n, err
		}
		if err := writeAttachment(cw, a); err != nil {
			return cw.n, err
		}
	}
	_, err := io.WriteString(cw, r.closing())
	return cw.n, err
}

func writeAttachment(w io.Writer, a *couchdoc.Attachment) error {
	if a.Body == nil {
		_, err := w.Write(a.Data)
		return err
	}
	vr := newVerifier(a.Body, a.Name, a.Length, a.Digest)
	if sv, ok := a.Body.(selfVerifying); ok && sv.VerifiesContent() {
		vr.digest, vr.md5 = nil, nil // the length is still checked
	}
	n, err := io.Copy(w, vr)
	if err != nil {
		return fmt.Errorf("write attachment %q: %w", a.Name, err)
	}
	if n != a.Length {
		return couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q: %d bytes, want %d", a.Name, n, a.Length)
	}
	return nil
}

// selfVerifying is a body that checks the bytes it yields against its
// content itself (the local store's, by a checksum per chunk): VerifiesContent
// reports whether it does for this body, and then no md5 is summed here.
type selfVerifying interface{ VerifiesContent() bool }

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// verifier passes bytes through, failing with couchdoc.ErrDigestMismatch
// as soon as more than length bytes arrive, and at EOF when the count or
// the md5 digest ("md5-<base64>") differs. length < 0 means unknown.
type verifier struct {
	r      io.Reader
	name   string
	length int64
	digest []byte // nil when there is no md5 digest to check
	md5    hash.Hash
	// encMD5, when set, sums the encoded (gzip) bytes the body was read
	// from: CouchDB states the digest of a gzip-stored attachment over
	// its encoded bytes, so either sum may match.
	encMD5 hash.Hash
	// sum is the md5 ("md5-<base64>") of the bytes read, once an EOF
	// passed the checks.
	sum string
	n   int64
	err error
}

func newVerifier(r io.Reader, name string, length int64, digest string) *verifier {
	v := &verifier{r: r, name: name, length: length}
	if d, ok := strings.CutPrefix(digest, "md5-"); ok {
		if sum, err := base64.StdEncoding.DecodeString(d); err == nil && len(sum) == md5.Size {
			v.digest = sum
			v.md5 = md5.New()
		}
	}
	return v
}

// overrun reports whether more bytes than the declared length arrived.
func (v *verifier) overrun() bool { return v.length >= 0 && v.n > v.length }

func (v *verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.r.Read(p)
	if n > 0 {
		v.n += int64(n)
		if v.length >= 0 && v.n > v.length {
			v.err = couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q: more than its length %d bytes", v.name, v.length)
			return 0, v.err
		}
		if v.md5 != nil {
			v.md5.Write(p[:n])
		}
	}
	if err == io.EOF {
		if v.length >= 0 && v.n != v.length {
			v.err = couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q: %d bytes, want %d", v.name, v.n, v.length)
			return n, v.err
		}
		if v.md5 != nil {
			sum := v.md5.Sum(nil)
			if string(sum) != string(v.digest) &&
				(v.encMD5 == nil || string(v.encMD5.Sum(nil)) != string(v.digest)) {
				v.err = couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment %q: md5 digest mismatch", v.name)
				return n, v.err
			}
			v.sum = md5String(sum)
		}
		v.err = io.EOF
	} else if err != nil {
		v.err = err
	}
	return n, err
}

// md5String is CouchDB's form of an md5 sum: "md5-<base64>".
func md5String(sum []byte) string {
	return "md5-" + base64.StdEncoding.EncodeToString(sum)
}
