package wire

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/settee/settee/couchdoc"
)

// BulkGetRequest is the body of POST /{db}/_bulk_get.
type BulkGetRequest struct {
	Docs []BulkGetRef `json:"docs"`
}

// BulkGetRef names one revision to fetch with _bulk_get.
type BulkGetRef struct {
	ID        string   `json:"id"`
	Rev       string   `json:"rev,omitempty"`
	AttsSince []string `json:"atts_since,omitempty"`
}

// BulkGetError is the error entry of a _bulk_get result:
// {"error": {"id","rev","error","reason"}}.
type BulkGetError struct {
	ID     string `json:"id"`
	Rev    string `json:"rev"`
	Error  string `json:"error"`
	Reason string `json:"reason"`
}

// BulkGetResult is one entry of a JSON _bulk_get answer
// {"results": [{"id": ..., "docs": [{"ok": doc}, {"error": {...}}]}]}.
type BulkGetResult struct {
	ID   string           `json:"id"`
	Docs []BulkGetDocJSON `json:"docs"`
}

// BulkGetDocJSON is one element of a result's "docs": exactly one of OK (a
// document's JSON), Error, or Missing (PouchDB's {"missing": rev}) is set.
type BulkGetDocJSON struct {
	OK      json.RawMessage `json:"ok,omitempty"`
	Error   *BulkGetError   `json:"error,omitempty"`
	Missing *string         `json:"missing,omitempty"`
}

// ReadBulkGet streams a JSON _bulk_get answer, calling fn for each document
// (attachments inline, checked with VerifyInline, or stubs) and, with a nil document, for each error
// entry (CouchDB's {"error": {...}}, PouchDB's {"missing": rev}) as a
// *RevError. It never holds more than one document in memory. Documents
// handed to fn do not alias its buffers.
func ReadBulkGet(r io.Reader, fn DocFunc) error {
	br := newBounded(r, MaxJSONPart, "_bulk_get document JSON")
	s := newJSONStream(br)
	if err := s.expect("_bulk_get answer", '{'); err != nil {
		return err
	}
	seen := false
	var entry []byte // reused: ParseDoc copies what it keeps
	for first := true; ; first = false {
		more, err := s.more("_bulk_get answer", '}', first)
		if err != nil || !more {
			if err == nil && !seen {
				return malformedf("_bulk_get answer", "no results")
			}
			return err
		}
		key, err := s.readKey("_bulk_get answer")
		if err != nil {
			return err
		}
		if string(key) != "results" {
			br.mark()
			if err := s.skipValue("_bulk_get answer"); err != nil {
				return err
			}
			continue
		}
		seen = true
		if err := s.expect("_bulk_get results", '['); err != nil {
			return err
		}
		for first := true; ; first = false {
			more, err := s.more("_bulk_get results", ']', first)
			if err != nil {
				return err
			}
			if !more {
				break
			}
			if entry, err = readBulkGetResult(s, br, entry, fn); err != nil {
				return err
			}
		}
	}
}

func readBulkGetResult(s *jsonStream, br *boundedReader, entry []byte, fn DocFunc) ([]byte, error) {
	br.mark()
	if err := s.expect("_bulk_get result", '{'); err != nil {
		return entry, err
	}
	var id string
	for first := true; ; first = false {
		more, err := s.more("_bulk_get result", '}', first)
		if err != nil || !more {
			return entry, err
		}
		key, err := s.readKey("_bulk_get result")
		if err != nil {
			return entry, err
		}
		switch string(key) {
		case "id":
			if entry, err = s.readValue("_bulk_get result id", entry[:0]); err != nil {
				return entry, err
			}
			if err := json.Unmarshal(entry, &id); err != nil {
				return entry, readErr("_bulk_get result id", err)
			}
		case "docs":
			if err := s.expect("_bulk_get docs", '['); err != nil {
				return entry, err
			}
			for first := true; ; first = false {
				more, err := s.more("_bulk_get docs", ']', first)
				if err != nil {
					return entry, err
				}
				if !more {
					break
				}
				br.mark()
				if entry, err = s.readValue("_bulk_get docs", entry[:0]); err != nil {
					return entry, err
				}
				if err := readBulkGetEntry(id, entry, fn); err != nil {
					return entry, err
				}
			}
		default:
			br.mark()
			if err := s.skipValue("_bulk_get result"); err != nil {
				return entry, err
			}
		}
	}
}

// readBulkGetEntry handles one raw element of a result's "docs". The usual
// {"ok": doc} goes straight to ParseDoc, which validates it; anything else
// is decoded as before.
func readBulkGetEntry(id string, entry []byte, fn DocFunc) error {
	if ok, found := okMember(entry); found {
		if doc, err := couchdoc.ParseDoc(ok); err == nil {
			if err := VerifyInline(doc, ok); err != nil {
				return err
			}
			return fn(doc, nil)
		}
		// Not a valid document, or not the whole entry: decide as before.
	}
	var e BulkGetDocJSON
	if err := json.Unmarshal(entry, &e); err != nil {
		return readErr("_bulk_get docs", err)
	}
	return handleBulkGetDoc(id, &e, fn)
}

// okMember returns V when entry is {"ok": V} with V starting with '{'
// (found is false for anything else). It does not look inside V: when V
// is one valid JSON object, the entry is exactly {"ok": V}; when it is not
// (say the entry has more members), ParseDoc refuses it and the caller
// decodes the entry as a whole instead.
func okMember(entry []byte) (doc []byte, found bool) {
	i := skipSpace(entry, 0)
	if i == len(entry) || entry[i] != '{' {
		return nil, false
	}
	i = skipSpace(entry, i+1)
	if !bytes.HasPrefix(entry[i:], []byte(`"ok"`)) {
		return nil, false
	}
	i = skipSpace(entry, i+4)
	if i == len(entry) || entry[i] != ':' {
		return nil, false
	}
	i = skipSpace(entry, i+1)
	j := len(entry) - 1
	for j > i && isSpace(entry[j]) {
		j--
	}
	if j <= i || entry[j] != '}' {
		return nil, false
	}
	v := bytes.TrimRight(entry[i:j], " \t\n\r")
	if len(v) == 0 || v[0] != '{' {
		return nil, false
	}
	return v, true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func handleBulkGetDoc(id string, e *BulkGetDocJSON, fn DocFunc) error {
	switch {
	case e.Missing != nil:
		return fn(nil, missingRev(id, *e.Missing))
	case e.Error != nil:
		eid := e.Error.ID
		if eid == "" {
			eid = id
		}
		name := e.Error.Error
		if name == "" {
			name = "unknown_error"
		}
		return fn(nil, &RevError{ID: eid, Rev: e.Error.Rev, Err: couchdoc.FromBody(0, name, e.Error.Reason)})
	case len(e.OK) > 0 && string(e.OK) != "null":
		doc, err := couchdoc.ParseDoc(e.OK)
		if err != nil {
			return refusedOr(fn, refusedDoc("_bulk_get document", e.OK, err))
		}
		if err := VerifyInline(doc, e.OK); err != nil {
			return err
		}
		return fn(doc, nil)
	}
	return malformedf("_bulk_get docs", "entry with neither ok nor error")
}

// ReadOpenRevsJSON streams the JSON answer of GET /{db}/{id}?open_revs=...:
// [{"ok": doc}, {"missing": rev}, ...]. A missing revision goes to fn as a
// *RevError matching couchdoc.ErrNotFound. Documents handed to fn do not
// alias its buffers.
func ReadOpenRevsJSON(r io.Reader, fn DocFunc) error {
	br := newBounded(r, MaxJSONPart, "open_revs document JSON")
	s := newJSONStream(br)
	if err := s.expect("open_revs answer", '['); err != nil {
		return err
	}
	var entry []byte
	for first := true; ; first = false {
		more, err := s.more("open_revs answer", ']', first)
		if err != nil || !more {
			return err
		}
		br.mark()
		if entry, err = s.readValue("open_revs answer", entry[:0]); err != nil {
			return err
		}
		if err := readOpenRevsEntry(entry, fn); err != nil {
			return err
		}
	}
}

func readOpenRevsEntry(entry []byte, fn DocFunc) error {
	if ok, found := okMember(entry); found {
		if doc, err := couchdoc.ParseDoc(ok); err == nil {
			if err := VerifyInline(doc, ok); err != nil {
				return err
			}
			return fn(doc, nil)
		}
		// Not a valid document, or not the whole entry: decide as before.
	}
	var e struct {
		OK      json.RawMessage `json:"ok"`
		Missing *string         `json:"missing"`
	}
	if err := json.Unmarshal(entry, &e); err != nil {
		return readErr("open_revs answer", err)
	}
	switch {
	case e.Missing != nil:
		return fn(nil, missingRev("", *e.Missing))
	case len(e.OK) > 0 && string(e.OK) != "null":
		doc, err := couchdoc.ParseDoc(e.OK)
		if err != nil {
			return refusedOr(fn, refusedDoc("open_revs document", e.OK, err))
		}
		if err := VerifyInline(doc, e.OK); err != nil {
			return err
		}
		return fn(doc, nil)
	}
	return malformedf("open_revs answer", "entry with neither ok nor missing")
}
