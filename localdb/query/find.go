package query

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb"
)

// Result is a _find answer: the documents (JSON objects, projected to the
// requested fields), the bookmark of the next page ("nil" when nothing was
// returned and no bookmark given), CouchDB's warnings joined by newlines,
// and the execution stats when asked.
type Result struct {
	Docs     []json.RawMessage `json:"docs"`
	Bookmark string            `json:"bookmark"`
	Stats    *Stats            `json:"execution_stats,omitempty"`
	Warning  string            `json:"warning,omitempty"`
}

// Stats are CouchDB's execution_stats.
type Stats struct {
	TotalKeysExamined       int     `json:"total_keys_examined"`
	TotalDocsExamined       int     `json:"total_docs_examined"`
	TotalQuorumDocsExamined int     `json:"total_quorum_docs_examined"`
	ResultsReturned         int     `json:"results_returned"`
	ExecutionTimeMs         float64 `json:"execution_time_ms"`
}

// scanWarningRatio is CouchDB's mango.index_scan_warning_threshold.
const scanWarningRatio = 10

const warnScanRatio = "The number of documents examined is high in proportion to the number of results returned. Consider adding a more specific index to improve this."

// Find runs a POST /{db}/_find body against the store and collects the
// documents. Errors are *couchdoc.Error values with CouchDB's names and
// statuses (bad requests, no_usable_index, invalid_bookmark).
func Find(ctx context.Context, db *localdb.DB, body []byte) (*Result, error) {
	res := &Result{Docs: []json.RawMessage{}}
	tail, err := FindFunc(ctx, db, body, func(doc json.RawMessage) error {
		res.Docs = append(res.Docs, doc)
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Bookmark, res.Stats, res.Warning = tail.Bookmark, tail.Stats, tail.Warning
	return res, nil
}

// FindFunc is Find streaming: fn gets each document as it is read, in
// order, and the returned Result holds all but Docs. An error from fn
// stops the query and is returned.
func FindFunc(ctx context.Context, db *localdb.DB, body []byte, fn func(json.RawMessage) error) (*Result, error) {
	return FindViewed(ctx, db, body, nil, fn)
}

// FindViewed is FindFunc for a reader who sees the documents as view
// makes them (a copy of each, which view may change): the selector, the
// sort and the fields apply to what view leaves, never to the stored
// body, so that a query cannot tell what view hides. Indexes only choose
// the candidates then: every candidate is read and matched. A nil view is
// FindFunc.
func FindViewed(ctx context.Context, db *localdb.DB, body []byte, view func(*couchdoc.Doc), fn func(json.RawMessage) error) (*Result, error) {
	req, err := parseRequest(body)
	if err != nil {
		return nil, err
	}
	return run(ctx, db, req, view, func(_ *localdb.IndexRow, out json.RawMessage) error { return fn(out) })
}

// run plans and runs a parsed query, calling fn with each row returned and
// its rendering.
func run(ctx context.Context, db *localdb.DB, req *request, view func(*couchdoc.Doc), fn func(*localdb.IndexRow, json.RawMessage) error) (*Result, error) {
	began := time.Now()
	st := &Stats{}
	need := neededMembers(req)
	var p *plan
	var columns []string
	var exact bool
	var last []byte
	skip := req.skip
	err := db.ScanChosen(ctx, func(indexes []*mango.Index) (*localdb.IndexScan, error) {
		var err error
		if p, err = makePlan(indexes, req); err != nil || p.empty || req.limit <= 0 {
			return nil, err
		}
		if view == nil && p.index != nil && covers(p.index, requiredFields(req)) {
			columns = p.index.Columns()
		}
		// A row returned whole, without its conflicts, needs its document
		// decoded only to be matched.
		exact = p.exact && req.fields == nil && !req.conflicts && view == nil
		p.scan.PageSize = min(req.limit+req.skip, 1000)
		if exact && p.gtKey != nil {
			// The rows of the excluded value are refused unread, counted
			// as CouchDB examines them.
			p.scan.Skip = p.gtKey
			p.scan.Skipped = func(ids []string) {
				for _, id := range ids {
					st.TotalKeysExamined++
					if !mango.IsDesignID(id) {
						st.TotalDocsExamined++
					}
				}
			}
		}
		return &p.scan, nil
	}, func(row *localdb.IndexRow) (bool, error) {
		st.TotalKeysExamined++
		if mango.IsDesignID(row.Doc.ID) {
			return true, nil // CouchDB leaves design docs out of _find
		}
		if view != nil {
			d := *row.Doc
			view(&d)
			row.Doc = &d
		}
		var doc map[string]any
		if exact && p.gtKey != nil && bytes.HasPrefix(row.Key, p.gtKey) {
			// The excluded bound's own value (exactRange): refused
			// without decoding the document, examined as CouchDB counts
			// it.
			st.TotalDocsExamined++
			return true, nil
		}
		if exact {
			// In the range is matched: nothing of the document is read.
			st.TotalDocsExamined++
		} else {
			var err error
			doc, err = decodeMembers(row, need)
			if columns != nil && err == nil {
				doc = coveredDoc(doc, columns)
			} else {
				st.TotalDocsExamined++
			}
			if err != nil || !req.selector.Match(doc) {
				return true, nil
			}
		}
		if p.index == nil && !hasFields(doc, req.sort) {
			return true, nil
		}
		if skip > 0 {
			skip--
			return true, nil
		}
		if req.conflicts {
			if err := addConflicts(ctx, db, row, doc); err != nil {
				return false, err
			}
		}
		out, err := render(row, doc, req.fields)
		if err != nil {
			return false, err
		}
		if err := fn(row, out); err != nil {
			return false, err
		}
		last = row.Key
		st.ResultsReturned++
		return st.ResultsReturned < req.limit, nil
	})
	if err != nil {
		return nil, err
	}
	res := &Result{Bookmark: "nil"}
	switch {
	case last != nil:
		res.Bookmark = base64.RawURLEncoding.EncodeToString(last)
	case req.bookmark != "":
		res.Bookmark = req.bookmark
	}
	warnings := p.warnings
	// CouchDB warns when docs examined / results returned (or docs
	// examined, with no results) is above the threshold.
	if st.TotalDocsExamined > scanWarningRatio*max(st.ResultsReturned, 1) {
		warnings = append(warnings, warnScanRatio)
	}
	res.Warning = strings.Join(warnings, "\n")
	if req.stats {
		st.ExecutionTimeMs = float64(time.Since(began).Microseconds()) / 1000
		res.Stats = st
	}
	return res, nil
}

// addConflicts gives a returned document its _conflicts, as _find with
// "conflicts": true does (the winner's other live leaves).
func addConflicts(ctx context.Context, db *localdb.DB, row *localdb.IndexRow, doc map[string]any) error {
	cur, err := db.Get(ctx, row.Doc.ID, localdb.GetOptions{Conflicts: true})
	if errors.Is(err, couchdoc.ErrNotFound) || err == nil && cur.Rev != row.Doc.Rev {
		return nil // changed since the scan read it: as read
	}
	if err != nil {
		return err
	}
	row.Doc.Conflicts = cur.Conflicts
	if len(cur.Conflicts) > 0 {
		list := make([]any, len(cur.Conflicts))
		for i, c := range cur.Conflicts {
			list[i] = c
		}
		doc["_conflicts"] = list
	}
	return nil
}

// hasFields: a document sorted by fields must have them (an index would
// not hold it otherwise).
func hasFields(doc map[string]any, sort []mango.SortField) bool {
	for _, f := range sort {
		if _, ok := mango.Lookup(doc, f.Field); !ok {
			return false
		}
	}
	return true
}

// render encodes the document, or only the listed fields (nested paths
// rebuilt as nested objects, missing ones left out).
func render(row *localdb.IndexRow, doc map[string]any, fields []string) (json.RawMessage, error) {
	if fields == nil {
		d := row.Doc
		return d.AppendJSON(make([]byte, 0, len(d.Body)+len(d.ID)+len(d.Rev)+32))
	}
	return json.Marshal(project(doc, fields))
}

// project returns the fields of doc that it has, at their paths.
func project(doc map[string]any, fields []string) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		v, ok := mango.Lookup(doc, f)
		if !ok {
			continue
		}
		parts := mango.SplitPath(f)
		m := out
		for _, p := range parts[:len(parts)-1] {
			sub, ok := m[p].(map[string]any)
			if !ok {
				sub = map[string]any{}
				m[p] = sub
			}
			m = sub
		}
		m[parts[len(parts)-1]] = v
	}
	return out
}

// coveredDoc is the document CouchDB 3.5 makes of an index row when the
// index covers the query (requiredFields): _id and the indexed fields, to
// which it applies the selector and from which it returns the fields
// without reading the document, so it counts none examined. Settee reads
// the row's body either way (its keys are collation keys, not values) and
// answers as CouchDB does.
func coveredDoc(doc map[string]any, columns []string) map[string]any {
	return project(doc, append([]string{"_id"}, columns...))
}
