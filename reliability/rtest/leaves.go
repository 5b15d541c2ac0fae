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
	out := Leaves{}
	for _, r := range remoteFeed(ctx, t, dbURL, "leaves of") {
		revs := slices.Clone(r.revs)
		slices.Sort(revs)
		out[r.id] = strings.Join(revs, " ")
	}
	return out
}

// feedRow is a document of a changes feed with its leaves.
type feedRow struct {
	id   string
	revs []string
}

// remoteFeed reads a remote database's changes feed with every leaf
// (style=all_docs); what starts the failure message.
func remoteFeed(ctx context.Context, t testing.TB, dbURL, what string) []feedRow {
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
		t.Fatalf("%s %s: changes: status %d", what, testutil.Redact(dbURL), st)
	}
	out := make([]feedRow, len(feed.Results))
	for i, r := range feed.Results {
		revs := make([]string, len(r.Changes))
		for j, c := range r.Changes {
			revs[j] = c.Rev
		}
		out[i] = feedRow{r.ID, revs}
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
