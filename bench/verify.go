package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// idRev is one _all_docs row: a document's winning revision.
type idRev struct {
	ID  string
	Rev string
}

// remoteWinners lists a database's live documents and their winning
// revisions, in id order.
func remoteWinners(ctx context.Context, dbURL string) ([]idRev, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, dbURL+"/_all_docs", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/_all_docs: status %d", redact(dbURL), resp.StatusCode)
	}
	dec := json.NewDecoder(resp.Body)
	if err := seekRows(dec); err != nil {
		return nil, err
	}
	var out []idRev
	for dec.More() {
		var row struct {
			ID    string `json:"id"`
			Value struct {
				Rev string `json:"rev"`
			} `json:"value"`
		}
		if err := dec.Decode(&row); err != nil {
			return nil, err
		}
		out = append(out, idRev{row.ID, row.Value.Rev})
	}
	return out, nil
}

// compareWinners checks that two databases have the same live documents
// with the same winning revisions.
func compareWinners(ctx context.Context, aURL, bURL string) error {
	a, err := remoteWinners(ctx, aURL)
	if err != nil {
		return err
	}
	b, err := remoteWinners(ctx, bURL)
	if err != nil {
		return err
	}
	return diffWinners(a, b)
}

func diffWinners(want, got []idRev) error {
	// CouchDB sorts by ICU collation, the local store may not: compare in
	// byte order.
	byID := func(a, b idRev) int { return strings.Compare(a.ID, b.ID) }
	slices.SortFunc(want, byID)
	slices.SortFunc(got, byID)
	diffs := 0
	var first string
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j >= len(got) || (i < len(want) && want[i].ID < got[j].ID):
			if first == "" {
				first = fmt.Sprintf("%s missing", want[i].ID)
			}
			diffs++
			i++
		case i >= len(want) || got[j].ID < want[i].ID:
			if first == "" {
				first = fmt.Sprintf("%s unexpected", got[j].ID)
			}
			diffs++
			j++
		default:
			if want[i].Rev != got[j].Rev {
				if first == "" {
					first = fmt.Sprintf("%s: winner %s, want %s", want[i].ID, got[j].Rev, want[i].Rev)
				}
				diffs++
			}
			i++
			j++
		}
	}
	if diffs > 0 {
		return fmt.Errorf("%d documents differ (first: %s)", diffs, first)
	}
	return nil
}
