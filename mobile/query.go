package mobile

import (
	"encoding/json"

	"github.com/settee/settee/localdb"
)

// allDocsOptions is the JSON form of AllDocs' options: CouchDB's query
// parameters of _all_docs.
type allDocsOptions struct {
	StartKey     string   `json:"startkey"`
	EndKey       string   `json:"endkey"`
	InclusiveEnd *bool    `json:"inclusive_end"`
	Keys         []string `json:"keys"`
	Limit        int      `json:"limit"`
	Skip         int      `json:"skip"`
	Descending   bool     `json:"descending"`
	IncludeDocs  bool     `json:"include_docs"`
	Conflicts    bool     `json:"conflicts"`
}

type allDocsValue struct {
	Rev     string `json:"rev"`
	Deleted bool   `json:"deleted,omitempty"`
}

type allDocsRow struct {
	ID    string          `json:"id,omitempty"`
	Key   string          `json:"key"`
	Value *allDocsValue   `json:"value,omitempty"`
	Doc   json.RawMessage `json:"doc,omitempty"`
	Error string          `json:"error,omitempty"`
}

type allDocsResult struct {
	TotalRows int64        `json:"total_rows"`
	Offset    int          `json:"offset"`
	Rows      []allDocsRow `json:"rows"`
}

// AllDocs lists documents by id as CouchDB's _all_docs. optionsJSON holds
// its parameters ("" means none): {"startkey","endkey","inclusive_end",
// "keys":[...],"limit","skip","descending","include_docs","conflicts"}.
// The answer is CouchDB's JSON: {"total_rows":N,"offset":N,"rows":[{"id",
// "key","value":{"rev"},"doc"}]}. Use a limit: the answer is built in
// memory.
func (d *Database) AllDocs(optionsJSON string) (resultJSON string, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return "", err
	}
	var o allDocsOptions
	if err := decodeOptions(optionsJSON, &o); err != nil {
		return "", err
	}
	opts := localdb.AllDocsOptions{
		StartKey: o.StartKey, EndKey: o.EndKey, Keys: o.Keys,
		ExclusiveEnd: o.InclusiveEnd != nil && !*o.InclusiveEnd,
		Limit:        o.Limit, Skip: o.Skip, Descending: o.Descending,
		IncludeDocs: o.IncludeDocs, Conflicts: o.Conflicts,
	}
	res := allDocsResult{Offset: o.Skip, Rows: []allDocsRow{}}
	res.TotalRows, err = d.db.AllDocs(d.ctx, opts, func(r *localdb.AllDocsRow) error {
		row := allDocsRow{ID: r.ID, Key: r.ID, Error: r.Error}
		if r.Error != "" {
			row.ID = ""
		} else {
			row.Value = &allDocsValue{Rev: r.Rev, Deleted: r.Deleted}
		}
		if r.Doc != nil {
			b, err := r.Doc.MarshalJSON()
			if err != nil {
				return err
			}
			row.Doc = b
		}
		res.Rows = append(res.Rows, row)
		return nil
	})
	if err != nil {
		return "", err
	}
	return marshal(res)
}

type changesResult struct {
	Results []*localdb.Change `json:"results"` // CouchDB's rows
	LastSeq int64             `json:"last_seq"`
}

// Changes returns the changes after sequence since (0 for all), at most
// limit rows (0 for no limit), as CouchDB's JSON: {"results":[{"seq":N,
// "id":"...","changes":[{"rev":"..."}],"deleted":true}],"last_seq":N}.
// Pass last_seq as the next since to page through the feed.
func (d *Database) Changes(since, limit int64) (resultJSON string, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return "", err
	}
	res := changesResult{Results: []*localdb.Change{}}
	res.LastSeq, err = d.db.Changes(d.ctx, localdb.ChangesOptions{Since: since, Limit: int(limit)}, func(c *localdb.Change) error {
		res.Results = append(res.Results, c)
		return nil
	})
	if err != nil {
		return "", err
	}
	return marshal(res)
}

// decodeOptions decodes an options JSON object; "" means no options.
// Unknown members are refused, so a misspelt option is not silently
// ignored.
func decodeOptions(s string, v any) error {
	if s == "" {
		return nil
	}
	dec := json.NewDecoder(stringsReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badRequest("options: %v", err)
	}
	return nil
}
