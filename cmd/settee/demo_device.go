package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// The demo's device helpers: writing, merging and printing documents.

func (dev *device) put(ctx context.Context, id, js string) error {
	_, err := dev.putRev(ctx, id, js)
	return err
}

// putRev writes a document over the current winner and returns the new rev.
func (dev *device) putRev(ctx context.Context, id, js string) (string, error) {
	doc, err := couchdoc.ParseDoc([]byte(js))
	if err != nil {
		return "", err
	}
	doc.ID = id
	cur, err := dev.db.Get(ctx, id, localdb.GetOptions{})
	switch {
	case err == nil:
		doc.Rev = cur.Rev
	case !errors.Is(err, couchdoc.ErrNotFound):
		return "", err
	}
	return dev.db.Put(ctx, doc)
}

// mergeLists merges the "items" of every live leaf of a list document.
func (dev *device) mergeLists(ctx context.Context, id string) (*couchdoc.Doc, error) {
	leaves, err := dev.db.OpenRevs(ctx, id, nil, localdb.GetOptions{})
	if err != nil {
		return nil, err
	}
	var items []string
	for _, l := range leaves {
		if l.Doc == nil || l.Doc.Deleted {
			continue
		}
		var b struct{ Items []string }
		if err := json.Unmarshal(l.Doc.Body, &b); err != nil {
			return nil, err
		}
		for _, it := range b.Items {
			if !slices.Contains(items, it) {
				items = append(items, it)
			}
		}
	}
	js, _ := json.Marshal(map[string]any{"type": "list", "items": items})
	return couchdoc.ParseDoc(js)
}

// short abbreviates a revision id for display: "2-a1b2c3".
func short(rev string) string {
	if i := strings.IndexByte(rev, '-'); i >= 0 && len(rev) > i+7 {
		return rev[:i+7]
	}
	return rev
}

func shortAll(revs []string) []string {
	out := make([]string, len(revs))
	for i, r := range revs {
		out[i] = short(r)
	}
	return out
}

// body renders a document's user fields compactly.
func body(doc *couchdoc.Doc) string {
	var b struct{ Items []string }
	if json.Unmarshal(doc.Body, &b) == nil && b.Items != nil {
		if j, err := json.Marshal(b.Items); err == nil {
			return string(j) // JSON, as every other thing settee prints
		}
	}
	return string(doc.Body)
}
