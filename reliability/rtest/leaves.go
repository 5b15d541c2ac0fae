package rtest

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
)

// Leaves maps document ids to their sorted leaf revisions: a cheap view of
// a revision forest for polling until two sides agree (Snapshot compares
// bodies and histories too, one request per document).
type Leaves map[string]string

// LocalLeaves lists a local store's leaves.
func LocalLeaves(ctx context.Context, t testing.TB, db *localdb.DB) Leaves {
	t.Helper()
	out := Leaves{}
	if _, err := db.Changes(ctx, localdb.ChangesOptions{AllDocs: true}, func(c *localdb.Change) error {
		revs := slices.Clone(c.Revs)
		slices.Sort(revs)
		out[c.ID] = strings.Join(revs, " ")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// RemoteLeaves lists a remote database's leaves from its changes feed
// (style=all_docs).
func RemoteLeaves(ctx context.Context, t testing.TB, dbURL string) Leaves {
	t.Helper()
	var feed struct {
		Results []struct {
			ID      string `json:"id"`
			Changes []struct {
				Rev string `json:"rev"`
			} `json:"changes"`
		} `json:"results"`
	}
	if st := testutil.DoJSON(ctx, t, "GET", dbURL+"/_changes?style=all_docs", nil, &feed); st != http.StatusOK {
		t.Fatalf("leaves of %s: changes: status %d", testutil.Redact(dbURL), st)
	}
	out := Leaves{}
	for _, r := range feed.Results {
		revs := make([]string, len(r.Changes))
		for i, c := range r.Changes {
			revs[i] = c.Rev
		}
		slices.Sort(revs)
		out[r.ID] = strings.Join(revs, " ")
	}
	return out
}

// DiffLeaves lists up to max differences between two Leaves.
func DiffLeaves(a, b Leaves, max int) []string {
	var out []string
	for id, ra := range a {
		if rb, ok := b[id]; !ok || ra != rb {
			out = append(out, id+": "+ra+" vs "+rb)
		}
		if len(out) >= max {
			return out
		}
	}
	for id, rb := range b {
		if _, ok := a[id]; !ok {
			out = append(out, id+": missing vs "+rb)
		}
		if len(out) >= max {
			break
		}
	}
	return out
}
