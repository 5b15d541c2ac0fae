package wire

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"strings"

	"github.com/settee/settee/couchdoc"
)

// MaxJSONPart bounds the JSON of one document read from a multipart part
// (CouchDB's default max_document_size is 8 MB). Larger parts are
// couchdoc.ErrTooLarge.
var MaxJSONPart int64 = 64 << 20

// DocFunc receives the documents of a document answer one at a time: a
// document, or a nil document and a per-revision error (a *RevError, such
// as a missing revision, matching couchdoc.ErrNotFound). Attachment bodies
// (Attachment.Body) are only valid until DocFunc returns. An error returned
// by DocFunc stops the read and is returned as is.
type DocFunc func(doc *couchdoc.Doc, revErr error) error

// ReadDocs reads a document answer of any form, by its Content-Type:
// multipart/mixed or multipart/related (see ReadMultipart), or JSON: an
// open_revs array [{"ok": doc}, {"missing": rev}] or a single document.
func ReadDocs(r io.Reader, contentType string, fn DocFunc) error {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return malformed("Content-Type "+contentType, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		return ReadMultipart(r, contentType, fn)
	}
	br := bufio.NewReader(r)
	c, err := firstByte(br)
	if err != nil {
		return readErr("document answer", err)
	}
	if c == '[' {
		return ReadOpenRevsJSON(br, fn)
	}
	js, err := readPart(br)
	if err != nil {
		return err
	}
	return handleJSONPart(js, false, fn)
}

// ReadMultipart reads a multipart/mixed body of documents (open_revs,
// _bulk_get) or a multipart/related body of one document, calling fn for
// each document and each missing revision, in body order.
//
// A multipart/related document's first part is its JSON; the parts after
// it are the bytes of its "follows" attachments, matched by the filename
// of their Content-Disposition or else by the order of the "follows"
// entries in the JSON. Each such attachment gets a Body that streams its
// part, decoded when the part is gzip-encoded and checked against the
// attachment's length and md5 digest (a mismatch fails the Read with
// couchdoc.ErrDigestMismatch; a Body read to its end without one sets
// the attachment's DataDigest). Bodies may be read in any order: parts
// passed over are spooled (in memory up to 1 MiB, then to a temporary file).
func ReadMultipart(r io.Reader, contentType string, fn DocFunc) error {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return malformed("Content-Type "+contentType, err)
	}
	boundary := params["boundary"]
	if boundary == "" {
		return malformedf("Content-Type", "no boundary in %q", contentType)
	}
	switch mt {
	case TypeRelated:
		return readRelated(r, boundary, fn)
	case TypeMixed:
		return readMixed(r, boundary, fn)
	}
	return malformedf("Content-Type", "want multipart/mixed or multipart/related, got %q", mt)
}

// mixedScratch is what readMixed reuses from part to part: the reader of
// the part and the buffer of its JSON (couchdoc.ParseDoc does not alias
// it). A _bulk_get answer is thousands of 1-KB parts, and a new 4-KB
// bufio.Reader and a buffer grown from 512 bytes for each were most of
// what a pull's reader allocated (BenchmarkReadMixedDocs).
type mixedScratch struct {
	br  *bufio.Reader
	js  bytes.Buffer
	lim io.LimitedReader
}

// readJSON reads the rest of br (at most MaxJSONPart bytes) into the
// scratch buffer, valid until the next call.
func (s *mixedScratch) readJSON() ([]byte, error) {
	s.js.Reset()
	s.lim = io.LimitedReader{R: s.br, N: MaxJSONPart + 1}
	if _, err := s.js.ReadFrom(&s.lim); err != nil {
		return nil, readErr("document part", err)
	}
	if int64(s.js.Len()) > MaxJSONPart {
		return nil, couchdoc.Errorf(couchdoc.ErrTooLarge, "document JSON larger than %d bytes", MaxJSONPart)
	}
	return s.js.Bytes(), nil
}

func readMixed(r io.Reader, boundary string, fn DocFunc) error {
	mr := multipart.NewReader(r, boundary)
	scratch := &mixedScratch{br: bufio.NewReader(nil)}
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return readErr("multipart/mixed", err)
		}
		if err := readMixedPart(p, scratch, fn); err != nil {
			return err
		}
	}
}

func readMixedPart(p *multipart.Part, scratch *mixedScratch, fn DocFunc) error {
	ct := p.Header.Get("Content-Type")
	mt, params, err := "application/json", map[string]string(nil), error(nil)
	if ct != "" {
		if mt, params, err = mime.ParseMediaType(ct); err != nil {
			return malformed("part Content-Type "+ct, err)
		}
	}
	br := scratch.br
	br.Reset(p)
	if mt == TypeRelated {
		// CouchDB announces multipart/related for a document whose
		// attachments are all stubs and then sends bare JSON.
		c, err := firstByte(br)
		if err != nil {
			return readErr("multipart/related part", err)
		}
		if c != '{' {
			if params["boundary"] == "" {
				return malformedf("part Content-Type", "no boundary in %q", ct)
			}
			return readRelated(br, params["boundary"], fn)
		}
	} else if mt != TypeJSON {
		return malformedf("multipart/mixed", "unexpected part type %q", mt)
	}
	js, err := scratch.readJSON()
	if err != nil {
		return err
	}
	return handleJSONPart(js, params["error"] == "true", fn)
}

// firstByte peeks at the first non-space byte.
func firstByte(br *bufio.Reader) (byte, error) {
	for {
		c, err := br.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c, br.UnreadByte()
	}
}

func readPart(r io.Reader) ([]byte, error) {
	js, err := io.ReadAll(io.LimitReader(r, MaxJSONPart+1))
	if err != nil {
		return nil, readErr("document part", err)
	}
	if int64(len(js)) > MaxJSONPart {
		return nil, couchdoc.Errorf(couchdoc.ErrTooLarge, "document JSON larger than %d bytes", MaxJSONPart)
	}
	return js, nil
}

// errorPart is the union of the error parts of open_revs and _bulk_get.
type errorPart struct {
	Missing *string `json:"missing"`
	ID      string  `json:"id"`
	Rev     string  `json:"rev"`
	Error   string  `json:"error"`
	Reason  string  `json:"reason"`
}

// handleJSONPart passes a document, a {"missing": rev} or an
// {"id","rev","error","reason"} part to fn.
func handleJSONPart(js []byte, isError bool, fn DocFunc) error {
	if isError || !bytes.Contains(js, []byte(`"_id"`)) {
		var e errorPart
		if err := json.Unmarshal(js, &e); err != nil {
			return malformed("document part", err)
		}
		if e.Missing != nil {
			return fn(nil, missingRev(e.ID, *e.Missing))
		}
		if e.Error != "" {
			return fn(nil, &RevError{ID: e.ID, Rev: e.Rev, Err: couchdoc.FromBody(0, e.Error, e.Reason)})
		}
		if isError {
			return malformedf("document part", "error part without error: %.200s", js)
		}
	}
	doc, err := couchdoc.ParseDoc(js)
	if err != nil {
		// The part ended at its boundary: the answer reads on.
		return refusedOr(fn, refusedDoc("document JSON", js, err))
	}
	if err := VerifyInline(doc, js); err != nil {
		return err
	}
	return fn(doc, nil)
}

// readErr classifies an error met while reading a stream: transport errors
// (truncation, timeouts, cancellation) are passed through wrapped, the rest
// is a *MalformedError.
func readErr(what string, err error) error {
	var ne net.Error
	var ce *couchdoc.Error
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &ne),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("read %s: %w", what, err)
	case errors.Is(err, io.EOF):
		return fmt.Errorf("read %s: %w", what, io.ErrUnexpectedEOF)
	case errors.As(err, &ce):
		return fmt.Errorf("read %s: %w", what, err)
	}
	var me *MalformedError
	if errors.As(err, &me) {
		return err
	}
	return malformed(what, err)
}

// readRelated reads one multipart/related document and calls fn once.
func readRelated(r io.Reader, boundary string, fn DocFunc) error {
	mr := multipart.NewReader(r, boundary)
	p, err := mr.NextRawPart()
	if err != nil {
		return readErr("multipart/related", err)
	}
	if ct := p.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != TypeJSON {
			return malformedf("multipart/related", "first part is %q, want application/json", ct)
		}
	}
	js, err := readPart(p)
	if err != nil {
		return err
	}
	doc, err := couchdoc.ParseDoc(js)
	if err != nil {
		// Its attachment parts are skipped with the rest of this body.
		return refusedOr(fn, refusedDoc("document JSON", js, err))
	}
	order, err := followsOrder(js)
	if err != nil {
		return err
	}
	st := &relatedState{mr: mr, order: order, readers: make([]io.Reader, len(order))}
	defer st.close()
	for i, f := range order {
		a := doc.Attachments[f.name]
		if a == nil {
			return malformedf("multipart/related", "attachment %q not in document", f.name)
		}
		st.atts = append(st.atts, a)
		a.Body = &attBody{st: st, idx: i}
		a.Data = nil
	}
	if err := fn(doc, nil); err != nil {
		return err
	}
	// What fn left unread is skipped through the length checks: a part
	// longer than its attachment's declared length is a broken or hostile
	// server, and ends the answer here rather than being skipped (perhaps
	// forever) on the way to the next part. Other errors of unread parts
	// stay unreported, as before.
	st.draining = true
	for i := range st.order {
		if st.err != nil {
			break
		}
		r, err := st.reader(i)
		if err != nil {
			break
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			if i < len(st.verifiers) && st.verifiers[i] != nil && st.verifiers[i].overrun() {
				return st.verifiers[i].err
			}
		}
	}
	return nil
}

// relatedState hands out the attachment parts of one multipart/related
// document to their Body readers.
type relatedState struct {
	mr      *multipart.Reader
	order   []followEntry
	atts    []*couchdoc.Attachment
	readers []io.Reader // per attachment: live part reader or spool
	// verifiers check each part that was started, by attachment.
	verifiers []*verifier
	live      int // index whose reader reads the current part, or -1
	started   bool
	spools    []*spool
	spoolMem  int64 // bytes the spools hold in memory
	err       error // sticky error of the part stream
	done      bool
	draining  bool // fn returned: parts are read only to be skipped
}

var errBodyGone = errors.New("wire: attachment body read after its callback returned")

type attBody struct {
	st  *relatedState
	idx int
}

// SetsDataDigest reports that reading the body to its end, without an
// error, sets the attachment's DataDigest: its md5 is checked (and so
// computed) on the way. A store reading it need not hash it again.
func (b *attBody) SetsDataDigest() bool {
	return !b.st.draining && newVerifier(nil, "", -1, b.st.atts[b.idx].Digest).md5 != nil
}

func (b *attBody) Read(p []byte) (int, error) {
	if b.st.done {
		return 0, errBodyGone
	}
	r, err := b.st.reader(b.idx)
	if err != nil {
		return 0, err
	}
	n, err := r.Read(p)
	if err == io.EOF && b.idx < len(b.st.verifiers) && b.st.verifiers[b.idx] != nil {
		// Every byte reached the reader, checked: its md5 is known.
		b.st.atts[b.idx].DataDigest = b.st.verifiers[b.idx].sum
	}
	return n, err
}

// reader returns the reader of attachment idx, advancing through the parts
// and spooling the ones passed over.
func (st *relatedState) reader(idx int) (io.Reader, error) {
	if !st.started {
		st.started, st.live = true, -1
	}
	for st.readers[idx] == nil {
		if st.err != nil {
			return nil, st.err
		}
		if st.live >= 0 {
			sp := newSpool(st.readers[st.live], min(spoolMem, spoolMemTotal-st.spoolMem))
			st.spoolMem += sp.inMemory()
			st.spools = append(st.spools, sp)
			st.readers[st.live], st.live = sp, -1
		}
		p, err := st.mr.NextRawPart()
		if err == io.EOF {
			st.err = malformedf("multipart/related", "no part for attachment %q", st.order[idx].name)
			continue
		}
		if err != nil {
			st.err = readErr("multipart/related", err)
			continue
		}
		i := st.match(p)
		if i < 0 {
			continue // a part nobody announced: skip it
		}
		st.readers[i], st.live = st.partReader(i, p), i
	}
	return st.readers[idx], nil
}

// match returns the attachment a part carries: the one its filename names,
// else the first one without a part yet.
func (st *relatedState) match(p *multipart.Part) int {
	if _, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition")); err == nil {
		if name, ok := params["filename"]; ok {
			for i, f := range st.order {
				if f.name == name && st.readers[i] == nil {
					return i
				}
			}
		}
	}
	for i := range st.order {
		if st.readers[i] == nil {
			return i
		}
	}
	return -1
}

func (st *relatedState) partReader(i int, p *multipart.Part) io.Reader {
	a := st.atts[i]
	var src io.Reader = &partErrReader{r: p}
	enc := st.order[i].encoding
	if ce := p.Header.Get("Content-Encoding"); ce != "" {
		enc = ce
	}
	var encMD5 hash.Hash
	if strings.EqualFold(enc, "gzip") {
		encMD5 = md5.New()
		src = &lazyGzip{r: io.TeeReader(src, encMD5)}
	}
	length := a.Length
	if !st.order[i].hasLength {
		length = -1
	}
	v := newVerifier(src, a.Name, length, a.Digest)
	if v.md5 != nil {
		v.encMD5 = encMD5
	}
	if st.verifiers == nil {
		st.verifiers = make([]*verifier, len(st.order))
	}
	st.verifiers[i] = v
	return v
}

func (st *relatedState) close() {
	st.done = true
	for _, s := range st.spools {
		s.close()
	}
}

// partErrReader classifies the read errors of a part.
type partErrReader struct{ r io.Reader }

func (p *partErrReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if err != nil && err != io.EOF {
		err = readErr("attachment part", err)
	}
	return n, err
}

// lazyGzip opens the gzip stream on first Read.
type lazyGzip struct {
	r  io.Reader
	zr *gzip.Reader
}

func (l *lazyGzip) Read(p []byte) (int, error) {
	if l.zr == nil {
		zr, err := gzip.NewReader(l.r)
		if err != nil {
			return 0, readErr("gzip attachment", err)
		}
		l.zr = zr
	}
	n, err := l.zr.Read(p)
	if err != nil && err != io.EOF {
		err = readErr("gzip attachment", err)
	}
	return n, err
}
