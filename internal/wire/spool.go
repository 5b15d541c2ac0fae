package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
)

// spoolMem is how much of a passed-over attachment part is kept in memory
// before the rest goes to a temporary file; spoolMemTotal bounds the memory
// of all the spools of one document.
const (
	spoolMem      = 1 << 20
	spoolMemTotal = 4 << 20
)

// spool holds the rest of an attachment part that was passed over because
// a later attachment was read first. It replays the bytes, then the error
// that ended the copy (a digest mismatch, a truncation) instead of io.EOF.
type spool struct {
	buf bytes.Buffer
	f   *os.File
	r   io.Reader
	err error
}

// newSpool copies src, keeping at most mem bytes in memory.
func newSpool(src io.Reader, mem int64) *spool {
	s := &spool{}
	_, err := io.Copy(&s.buf, io.LimitReader(src, mem))
	if err == nil && int64(s.buf.Len()) == mem {
		s.f, err = os.CreateTemp("", "settee-att-*")
		if err == nil {
			if _, err = s.f.Write(s.buf.Bytes()); err == nil {
				s.buf.Reset()
				if _, err = io.Copy(s.f, src); err == nil {
					_, err = s.f.Seek(0, io.SeekStart)
				}
			}
		}
	}
	s.err = err
	if s.f != nil {
		s.r = s.f
	} else {
		s.r = &s.buf
	}
	return s
}

func (s *spool) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err == io.EOF && s.err != nil {
		return n, s.err
	}
	return n, err
}

// inMemory is the memory the spool holds.
func (s *spool) inMemory() int64 { return int64(s.buf.Len()) }

func (s *spool) close() {
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
	}
}

// followEntry is one "follows" attachment of a document's JSON, in the
// order the JSON lists it.
type followEntry struct {
	name      string
	encoding  string
	hasLength bool
}

// followsOrder returns the attachments marked "follows" in a document's
// JSON, in JSON order: the order of their parts in a multipart body.
func followsOrder(js []byte) ([]followEntry, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	if err := expectDelim(dec, '{'); err != nil {
		return nil, malformed("document JSON", err)
	}
	var out []followEntry
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return nil, malformed("document JSON", err)
		}
		if key != "_attachments" {
			if err := skipValue(dec); err != nil {
				return nil, malformed("document JSON", err)
			}
			continue
		}
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed("document JSON", err)
		}
		if tok == nil {
			continue
		}
		if d, ok := tok.(json.Delim); !ok || d != '{' {
			return nil, malformedf("document JSON", "_attachments is not an object")
		}
		for dec.More() {
			name, err := stringToken(dec)
			if err != nil {
				return nil, malformed("document JSON", err)
			}
			var a struct {
				Follows  bool   `json:"follows"`
				Encoding string `json:"encoding"`
				Length   *int64 `json:"length"`
			}
			if err := dec.Decode(&a); err != nil {
				return nil, malformed("document JSON", err)
			}
			if a.Follows {
				out = append(out, followEntry{name: name, encoding: a.Encoding, hasLength: a.Length != nil})
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, malformed("document JSON", err)
		}
	}
	return out, nil
}
