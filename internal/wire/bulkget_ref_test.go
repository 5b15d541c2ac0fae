package wire

import (
	"encoding/json"
	"io"

	"github.com/settee/settee/couchdoc"
)

// The JSON _bulk_get and open_revs readers of commit 6f2f716 (json.Decoder
// throughout), kept as the reference FuzzReadBulkGetDifferential compares
// the streaming readers with.

// refReadBulkGet streams a JSON _bulk_get answer, calling fn for each document
// (attachments inline, checked with VerifyInline, or stubs) and, with a nil document, for each error
// entry (CouchDB's {"error": {...}}, PouchDB's {"missing": rev}) as a
// *RevError. It never holds more than one document in memory.
func refReadBulkGet(r io.Reader, fn DocFunc) error {
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
			if err := refReadBulkGetResult(dec, br, fn); err != nil {
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

func refReadBulkGetResult(dec *json.Decoder, br *boundedReader, fn DocFunc) error {
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

// refReadOpenRevsJSON streams the JSON answer of GET /{db}/{id}?open_revs=...:
// [{"ok": doc}, {"missing": rev}, ...]. A missing revision goes to fn as a
// *RevError matching couchdoc.ErrNotFound.
func refReadOpenRevsJSON(r io.Reader, fn DocFunc) error {
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
				if err := refusedOr(fn, refusedDoc("open_revs document", e.OK, err)); err != nil {
					return err
				}
				continue
			}
			if err := VerifyInline(doc, e.OK); err != nil {
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
