package wire

import (
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
// *RevError. It never holds more than one document in memory.
func ReadBulkGet(r io.Reader, fn DocFunc) error {
	br := newBounded(r, MaxJSONPart, "_bulk_get document JSON")
	dec := json.NewDecoder(br)
	if err := expectDelim(dec, '{'); err != nil {
		return readErr("_bulk_get answer", err)
	}
	seen := false
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return readErr("_bulk_get answer", err)
		}
		if key != "results" {
			br.mark()
			if err := skipValue(dec); err != nil {
				return readErr("_bulk_get answer", err)
			}
			continue
		}
		seen = true
		if err := expectDelim(dec, '['); err != nil {
			return readErr("_bulk_get results", err)
		}
		for dec.More() {
			if err := readBulkGetResult(dec, br, fn); err != nil {
				return err
			}
		}
		if err := expectDelim(dec, ']'); err != nil {
			return readErr("_bulk_get results", err)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return readErr("_bulk_get answer", err)
	}
	if !seen {
		return malformedf("_bulk_get answer", "no results")
	}
	return nil
}

func readBulkGetResult(dec *json.Decoder, br *boundedReader, fn DocFunc) error {
	br.mark()
	if err := expectDelim(dec, '{'); err != nil {
		return readErr("_bulk_get result", err)
	}
	var id string
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return readErr("_bulk_get result", err)
		}
		switch key {
		case "id":
			if err := dec.Decode(&id); err != nil {
				return readErr("_bulk_get result id", err)
			}
		case "docs":
			if err := expectDelim(dec, '['); err != nil {
				return readErr("_bulk_get docs", err)
			}
			for dec.More() {
				br.mark()
				var e BulkGetDocJSON
				if err := dec.Decode(&e); err != nil {
					return readErr("_bulk_get docs", err)
				}
				if err := handleBulkGetDoc(id, &e, fn); err != nil {
					return err
				}
			}
			if err := expectDelim(dec, ']'); err != nil {
				return readErr("_bulk_get docs", err)
			}
		default:
			br.mark()
			if err := skipValue(dec); err != nil {
				return readErr("_bulk_get result", err)
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return readErr("_bulk_get result", err)
	}
	return nil
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
			return malformed("_bulk_get document", err)
		}
		if err := VerifyInline(doc); err != nil {
			return err
		}
		return fn(doc, nil)
	}
	return malformedf("_bulk_get docs", "entry with neither ok nor error")
}

// ReadOpenRevsJSON streams the JSON answer of GET /{db}/{id}?open_revs=...:
// [{"ok": doc}, {"missing": rev}, ...]. A missing revision goes to fn as a
// *RevError matching couchdoc.ErrNotFound.
func ReadOpenRevsJSON(r io.Reader, fn DocFunc) error {
	br := newBounded(r, MaxJSONPart, "open_revs document JSON")
	dec := json.NewDecoder(br)
	if err := expectDelim(dec, '['); err != nil {
		return readErr("open_revs answer", err)
	}
	for dec.More() {
		br.mark()
		var e struct {
			OK      json.RawMessage `json:"ok"`
			Missing *string         `json:"missing"`
		}
		if err := dec.Decode(&e); err != nil {
			return readErr("open_revs answer", err)
		}
		switch {
		case e.Missing != nil:
			if err := fn(nil, missingRev("", *e.Missing)); err != nil {
				return err
			}
		case len(e.OK) > 0 && string(e.OK) != "null":
			doc, err := couchdoc.ParseDoc(e.OK)
			if err != nil {
				return malformed("open_revs document", err)
			}
			if err := VerifyInline(doc); err != nil {
				return err
			}
			if err := fn(doc, nil); err != nil {
				return err
			}
		default:
			return malformedf("open_revs answer", "entry with neither ok nor missing")
		}
	}
	if err := expectDelim(dec, ']'); err != nil {
		return readErr("open_revs answer", err)
	}
	return nil
}
