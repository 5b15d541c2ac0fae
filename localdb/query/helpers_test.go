package query_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/localdb/query"
)

var bg = context.Background()

func put(t testing.TB, db *localdb.DB, id, body string) string {
	t.Helper()
	rev, err := db.Put(bg, &couchdoc.Doc{ID: id, Body: json.RawMessage(body)})
	if err != nil {
		t.Fatalf("put %s: %v", id, err)
	}
	return rev
}

func createIndex(t testing.TB, db *localdb.DB, req string) *query.CreateResult {
	t.Helper()
	res, err := query.CreateIndex(bg, db, []byte(req))
	if err != nil {
		t.Fatalf("create index %s: %v", req, err)
	}
	return res
}

func find(t testing.TB, db *localdb.DB, req string) *query.Result {
	t.Helper()
	res, err := query.Find(bg, db, []byte(req))
	if err != nil {
		t.Fatalf("find %s: %v", req, err)
	}
	return res
}

// ids lists the _id of each document of a result.
func ids(t testing.TB, res *query.Result) []string {
	t.Helper()
	out := []string{}
	for _, d := range res.Docs {
		var m struct {
			ID string `json:"_id"`
		}
		if err := json.Unmarshal(d, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m.ID)
	}
	return out
}

func wantCouchError(t testing.TB, err error, status int, name string) {
	t.Helper()
	var ce *couchdoc.Error
	if !errors.As(err, &ce) || ce.Status != status || ce.Name != name {
		t.Fatalf("error %v, want %d %s", err, status, name)
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func localdbTestOpen(t *testing.T) *localdb.DB { return localdbtest.Open(t) }

func deleteIndex(db *localdb.DB, ddoc, name string) error {
	return query.DeleteIndex(bg, db, ddoc, name)
}

// rewrite runs statements on the closed store at path through a plain
// SQLite connection (to make an older or damaged file), then reopens it.
func rewrite(t *testing.T, path, statements string) *localdb.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(statements); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
