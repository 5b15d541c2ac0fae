package query

import (
	"context"

	"github.com/settee/settee/localdb"
)

// Explain answers POST /{db}/_explain for a _find body: the index chosen,
// the normalized selector, the options and the key range, in CouchDB 3's
// shape. It fails as Find would.
func Explain(ctx context.Context, db *localdb.DB, dbName string, body []byte) (map[string]any, error) {
	req, err := parseRequest(body)
	if err != nil {
		return nil, err
	}
	p, err := makePlan(db.Indexes(), req)
	if err != nil {
		return nil, err
	}
	var index IndexInfo
	if p.index == nil {
		index = allDocsInfo()
	} else {
		index = jsonInfo(p.index)
	}
	fields := []string{}
	if req.fields != nil {
		fields = req.fields
	}
	sort := map[string]any{}
	for _, f := range req.sort {
		dir := "asc"
		if f.Desc {
			dir = "desc"
		}
		sort[f.Field] = dir
	}
	useIndex := req.useIndex
	if useIndex == nil {
		useIndex = []string{}
	}
	bookmark := req.bookmark
	if bookmark == "" {
		bookmark = "nil"
	}
	direction := "fwd"
	if p.scan.Descending {
		direction = "rev"
	}
	var startKey, endKey any = bound(p.startKey, false), bound(p.endKey, p.endOpen)
	if p.index == nil {
		startKey, endKey = idBound(p.startKey), idBound(p.endKey)
		if p.endOpen {
			endKey = "<MAX>"
		}
	}
	// A covering index is read without the documents (include_docs false).
	covering := p.index != nil && covers(p.index, requiredFields(req))
	var mrConflicts any = "undefined"
	if req.conflicts {
		mrConflicts = true
	}
	return map[string]any{
		"dbname":      dbName,
		"index":       index,
		"partitioned": false,
		"selector":    orderedSelector(req),
		"opts": map[string]any{
			"use_index": useIndex, "bookmark": bookmark, "limit": req.limit, "skip": req.skip,
			"sort": sort, "fields": fields, "partition": "", "r": 1, "conflicts": req.conflicts,
			"stale": false, "update": true, "stable": false, "execution_stats": req.stats,
			"allow_fallback": req.allowFallback,
		},
		"limit":            req.limit,
		"skip":             req.skip,
		"fields":           fields,
		"index_candidates": candidates(db, req, p),
		"selector_hints":   selectorHints(req),
		"mrargs": map[string]any{
			"include_docs": !covering, "view_type": "map", "reduce": false, "partition": nil,
			"start_key": startKey, "end_key": endKey, "direction": direction,
			"stable": false, "update": true, "conflicts": mrConflicts,
		},
		"covering": covering,
	}, nil
}

// bound is a json index bound as CouchDB shows it: the values, then
// "<MAX>" for an open end.
func bound(vals []any, open bool) []any {
	out := append([]any{}, vals...)
	if open {
		out = append(out, "<MAX>")
	}
	return out
}

func idBound(vals []any) any {
	if len(vals) == 0 {
		return nil
	}
	return vals[0]
}
