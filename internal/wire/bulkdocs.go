package wire

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/settee/settee/couchdoc"
)

// AppendBulkDocs appends the body of POST /{db}/_bulk_docs,
// {"docs": [...], "new_edits": newEdits}, encoding each document with
// couchdoc's AppendJSON (attachments inline or stubs).
func AppendBulkDocs(dst []byte, docs []*couchdoc.Doc, newEdits bool) ([]byte, error) {
	dst = append(dst, `{"docs":[`...)
	for i, d := range docs {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = d.AppendJSON(dst); err != nil {
			return nil, err
		}
	}
	if newEdits {
		return append(dst, `],"new_edits":true}`...), nil
	}
	return append(dst, `],"new_edits":false}`...), nil
}

// ReadBulkDocsResult reads a _bulk_docs answer, an array of
// {"id","rev","ok"} or {"id","rev","error","reason"}, and returns the
// failed entries only. CouchDB 3 answers new_edits=false with the failures
// alone (often []); PouchDB lists every document.
func ReadBulkDocsResult(r io.Reader) ([]couchdoc.DocResult, error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '['); err != nil {
		return nil, readErr("_bulk_docs answer", err)
	}
	var failed []couchdoc.DocResult
	for dec.More() {
		var res couchdoc.DocResult
		if err := dec.Decode(&res); err != nil {
			return nil, readErr("_bulk_docs answer", err)
		}
		if res.Error != "" {
			failed = append(failed, res)
		}
	}
	if err := expectDelim(dec, ']'); err != nil {
		return nil, readErr("_bulk_docs answer", err)
	}
	return failed, nil
}

// ParseRevsDiff parses a _revs_diff answer,
// {"id": {"missing": [...], "possible_ancestors": [...]}}.
func ParseRevsDiff(data []byte) (map[string]couchdoc.RevsDiffResult, error) {
	var m map[string]couchdoc.RevsDiffResult
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		return nil, readErr("_revs_diff answer", err)
	}
	if m == nil {
		return nil, malformedf("_revs_diff answer", "not an object")
	}
	for id, r := range m {
		for _, rev := range r.Missing {
			if rev == "" {
				return nil, malformedf("_revs_diff answer", "empty rev for %q", id)
			}
		}
	}
	return m, nil
}
