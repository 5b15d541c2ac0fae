package query

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/internal/viewstore"
)

// ViewResult is the answer of View, as CouchDB's _view gives it.
type ViewResult struct {
	// TotalRows and Offset are set for a map query that is sorted.
	TotalRows, Offset *int64
	// UpdateSeq is set when asked for (update_seq=true).
	UpdateSeq *int64
	Rows      []ViewRow
}

// ViewRow is one row: ID is empty in a reduction's rows; Doc is set with
// include_docs (null when the document is missing or deleted).
type ViewRow struct {
	ID    string
	Key   json.RawMessage
	Value json.RawMessage
	Doc   json.RawMessage
	// Error and Reason, when Error is set, stand for Value: the row of a
	// reduction CouchDB refuses to give (reduce_overflow_error), the last
	// row of its answer.
	Error, Reason string
}

// MarshalJSON writes the row as CouchDB does.
func (r ViewRow) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if r.ID != "" {
		id, _ := json.Marshal(r.ID)
		b.WriteString(`"id":`)
		b.Write(id)
		b.WriteByte(',')
	}
	b.WriteString(`"key":`)
	b.Write(orNullJSON(r.Key))
	if r.Error != "" {
		e, _ := json.Marshal(r.Error)
		reason, _ := json.Marshal(r.Reason)
		b.WriteString(`,"error":`)
		b.Write(e)
		b.WriteString(`,"reason":`)
		b.Write(reason)
		b.WriteByte('}')
		return b.Bytes(), nil
	}
	b.WriteString(`,"value":`)
	b.Write(orNullJSON(r.Value))
	if r.Doc != nil {
		b.WriteString(`,"doc":`)
		b.Write(r.Doc)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func orNullJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// View queries view of design document ddoc (its name, without _design/)
// with CouchDB 3.5's _view options, bringing the view up to date first
// unless o.Update says otherwise. Errors: ErrMissingView and the store's
// not_found for what is missing, query_parse_error (400) for options
// CouchDB refuses, the runtime's errors (package jsfunc) for functions
// that fail.
func View(ctx context.Context, db *localdb.DB, ddoc, view string, o *ViewOptions) (*ViewResult, error) {
	if o == nil {
		o, _ = ParseViewOptions(nil)
	}
	dv, err := loadViews(ctx, db, ddoc)
	if err != nil {
		return nil, err
	}
	vi, def, err := dv.view(view)
	if err != nil {
		return nil, err
	}
	if err := dv.checkLanguage(); err != nil {
		return nil, err
	}
	reduce, err := checkViewOptions(def, o)
	if err != nil {
		return nil, err
	}
	f, closeFile, err := openView(ctx, db, dv)
	if err != nil {
		return nil, err
	}
	defer closeFile()
	if o.Update == "true" {
		if err := updateView(ctx, db, dv, f); err != nil {
			return nil, err
		}
	}
	var res *ViewResult
	if reduce {
		red := &reducer{src: def.Reduce, lib: dv.Lib, pool: poolFor(db, dv.ID)}
		res, err = reduceQuery(ctx, f, vi, red, o, !noViewChunks.Load())
		if errors.Is(err, errNeedRows) {
			res, err = reduceQuery(ctx, f, vi, red, o, false)
		}
	} else {
		res, err = mapQuery(ctx, db, f, vi, o, def.Reduce == "")
	}
	if err != nil {
		return nil, err
	}
	if o.UpdateSeq {
		// A view's update_seq is the last change to its rows, as CouchDB 3 keeps it.
		seq, err := f.ViewSeq(ctx, vi)
		if err != nil {
			return nil, err
		}
		res.UpdateSeq = &seq
	}
	if o.Update == "lazy" {
		// CouchDB updates after answering; here the caller waits for it.
		if err := updateView(ctx, db, dv, f); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// checkViewOptions refuses the combinations CouchDB refuses and says
// whether the query reduces.
func checkViewOptions(def *viewDef, o *ViewOptions) (bool, error) {
	reduce := def.Reduce != ""
	if o.Reduce != nil {
		if *o.Reduce && def.Reduce == "" {
			return false, queryParseError("Reduce is invalid for map-only views.")
		}
		reduce = *o.Reduce
	}
	grouping := o.Group || o.GroupLevel >= 0
	switch {
	case o.HasGroup && !o.Group && o.GroupLevel > 0:
		return false, queryParseError("Can't specify group=false and group_level>0 at the same time")
	case !reduce && grouping:
		return false, queryParseError("Invalid use of grouping on a map view.")
	case reduce && o.IncludeDocs:
		return false, queryParseError("`include_docs` is invalid for reduce")
	case reduce && len(o.Keys) > 1 && !o.Group:
		return false, queryParseError("Multi-key fetches for reduce views must use `group=true`")
	}
	if o.Keys == nil && o.StartKey != nil && o.EndKey != nil {
		s, err := encodeKey(nil, o.StartKey)
		if err != nil {
			return false, ErrInvalidJSON
		}
		e, err := encodeKey(nil, o.EndKey)
		if err != nil {
			return false, ErrInvalidJSON
		}
		c := bytes.Compare(s, e)
		// The refs are CouchDB's for these two errors.
		if !o.Descending && c > 0 {
			e := queryParseError("No rows can match your key range, reverse your start_key and end_key or set descending=true")
			e.Ref = 72864418
			return false, e
		}
		if o.Descending && c < 0 {
			e := queryParseError("No rows can match your key range, reverse your start_key and end_key or set descending=false")
			e.Ref = 1505073861
			return false, e
		}
	}
	return reduce, nil
}

// ranges returns the key ranges a query reads, in order: one per key of
// Keys (reversed when a map query is descending, as CouchDB reads them),
// else one.
func ranges(vi int, o *ViewOptions, reduce bool) ([]viewstore.Range, error) {
	if o.Keys != nil {
		var rs []viewstore.Range
		for i := range o.Keys {
			k := o.Keys[i]
			if o.Descending && !reduce {
				k = o.Keys[len(o.Keys)-1-i]
			}
			enc, err := encodeKey(nil, k)
			if err != nil {
				return nil, ErrInvalidJSON
			}
			b := &viewstore.Bound{Key: enc}
			rs = append(rs, viewstore.Range{View: vi, Start: b, End: b, InclusiveEnd: o.InclusiveEnd, Descending: o.Descending})
		}
		return rs, nil
	}
	r := viewstore.Range{View: vi, InclusiveEnd: o.InclusiveEnd, Descending: o.Descending}
	if o.StartKey != nil {
		enc, err := encodeKey(nil, o.StartKey)
		if err != nil {
			return nil, ErrInvalidJSON
		}
		r.Start = &viewstore.Bound{Key: enc, ID: o.StartDocID, HasID: o.HasStartDocID}
	}
	if o.EndKey != nil {
		enc, err := encodeKey(nil, o.EndKey)
		if err != nil {
			return nil, ErrInvalidJSON
		}
		r.End = &viewstore.Bound{Key: enc, ID: o.EndDocID, HasID: o.HasEnd}
	}
	return []viewstore.Range{r}, nil
}

// mapQuery reads rows.
// CouchDB leaves total_rows and offset out of a sorted=false answer of a
// map-only view (mapOnly), not of a reduce view read with reduce=false.
func mapQuery(ctx context.Context, db *localdb.DB, f *viewstore.File, vi int, o *ViewOptions, mapOnly bool) (*ViewResult, error) {
	rs, err := ranges(vi, o, false)
	if err != nil {
		return nil, err
	}
	res := &ViewResult{Rows: []ViewRow{}}
	// The offset is that of the range (of Keys, the first key that gives
	// a row, else the last one), plus skip, as CouchDB counts it.
	var offsetOf *viewstore.Bound
	offsetSet := false
	skip, limit := o.Skip, o.Limit
	for _, r := range rs {
		found := false
		err := f.Scan(ctx, r, 0, func(row *viewstore.Row) (bool, error) {
			found = true
			if limit == 0 {
				return false, nil
			}
			if skip > 0 {
				skip--
				return true, nil
			}
			vr := ViewRow{ID: row.ID, Key: row.KJSON, Value: row.Value}
			if o.IncludeDocs {
				doc, err := includedDoc(ctx, db, row.ID, row.Value, o.Conflicts)
				if err != nil {
					return false, err
				}
				vr.Doc = doc
			}
			res.Rows = append(res.Rows, vr)
			limit--
			return limit != 0, nil
		})
		if err != nil {
			return nil, err
		}
		if !offsetSet {
			offsetOf, offsetSet = r.Start, found
		}
	}
	if o.Sorted || !mapOnly {
		total, err := f.Rows(ctx, vi)
		if err != nil {
			return nil, err
		}
		before := f.Before
		if noViewChunks.Load() {
			before = f.BeforeByCount
		}
		offset, err := before(ctx, vi, offsetOf, o.Descending)
		if err != nil {
			return nil, err
		}
		offset = min(offset+o.Skip, total)
		res.TotalRows, res.Offset = &total, &offset
	}
	return res, nil
}

// includedDoc is the doc of a row with include_docs: the emitting
// document, or the one the value names ({"_id": ..., "_rev": ...}, CouchDB's
// linked documents); null when it is missing or deleted. With conflicts,
// _conflicts is added unless the value names a revision (CouchDB 3.5
// reads that revision alone).
func includedDoc(ctx context.Context, db *localdb.DB, id string, value []byte, conflicts bool) (json.RawMessage, error) {
	var link struct {
		ID  string `json:"_id"`
		Rev string `json:"_rev"`
	}
	opts := localdb.GetOptions{Conflicts: conflicts}
	if len(value) > 0 && value[0] == '{' && json.Unmarshal(value, &link) == nil && link.ID != "" {
		id, opts.Rev = link.ID, link.Rev
		opts.Conflicts = conflicts && link.Rev == ""
	}
	doc, err := db.Get(ctx, id, opts)
	if errors.Is(err, couchdoc.ErrNotFound) {
		return json.RawMessage("null"), nil
	}
	if err != nil {
		return nil, err
	}
	return doc.AppendJSON(nil)
}

// MarshalJSON writes the answer as CouchDB's _view does.
func (r *ViewResult) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if r.TotalRows != nil {
		fmt.Fprintf(&b, `"total_rows":%d,"offset":%d,`, *r.TotalRows, *r.Offset)
	}
	if r.UpdateSeq != nil {
		fmt.Fprintf(&b, `"update_seq":%d,`, *r.UpdateSeq)
	}
	b.WriteString(`"rows":[`)
	for i, row := range r.Rows {
		if i > 0 {
			b.WriteByte(',')
		}
		rb, err := row.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b.Write(rb)
	}
	b.WriteString("]}")
	return b.Bytes(), nil
}
