package localdb_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
)

func gone(db *localdb.DB, id string) bool {
	_, err := db.Get(bg, id, localdb.GetOptions{})
	return errors.Is(err, couchdoc.ErrNotFound)
}

func TestExpirationSweeper(t *testing.T) {
	db := open(t)
	put(t, db, "soon", "", `{}`)
	put(t, db, "later", "", `{}`)
	put(t, db, "keep", "", `{}`)
	wantErr(t, db.SetExpiration(bg, "nope", time.Now()), couchdoc.ErrNotFound)
	wantErr(t, db.SetExpiration(bg, "_local/x", time.Now()), couchdoc.ErrBadRequest)

	later := time.Now().Add(time.Hour)
	if err := db.SetExpiration(bg, "later", later); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Expiration(bg, "later"); err != nil || got.UnixMilli() != later.UnixMilli() {
		t.Errorf("expiration %v %v, want %v", got, err, later)
	}
	if got, _ := db.Expiration(bg, "keep"); !got.IsZero() {
		t.Errorf("keep expires at %v", got)
	}
	if err := db.SetExpiration(bg, "soon", time.Now().Add(50*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the sweeper purges an expired doc", func() bool { return gone(db, "soon") })
	if gone(db, "later") || gone(db, "keep") {
		t.Fatal("the sweeper purged a doc not yet expired")
	}
	info, _ := db.Info(bg)
	if info.DocDelCount != 0 || info.PurgeSeq != 1 {
		t.Errorf("info %+v: want a purge, not a tombstone", info)
	}
	if got, _ := db.Expiration(bg, "soon"); !got.IsZero() {
		t.Errorf("purged doc still has an expiration %v", got)
	}
	// Clearing keeps the doc; an edit keeps the expiration (it is the
	// document's, not the revision's).
	put(t, db, "later", mustGet(t, db, "later"), `{"edited":true}`)
	if got, _ := db.Expiration(bg, "later"); got.UnixMilli() != later.UnixMilli() {
		t.Errorf("an edit changed the expiration to %v", got)
	}
	if err := db.SetExpiration(bg, "later", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Expiration(bg, "later"); !got.IsZero() {
		t.Errorf("cleared expiration is %v", got)
	}
}

func TestExpiredWhileClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	put(t, db, "a", "", `{}`)
	put(t, db, "b", "", `{}`)
	at := time.Now().Add(200 * time.Millisecond)
	if err := db.SetExpiration(bg, "a", at); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(at) + 10*time.Millisecond)
	db = openPath(t, path)
	// Purged by Open itself, before it returns.
	if !gone(db, "a") || gone(db, "b") {
		t.Fatalf("after reopening: a gone %v, b gone %v", gone(db, "a"), gone(db, "b"))
	}
}

func TestPurgeExpiredManyAndConflicts(t *testing.T) {
	db := open(t)
	repl(t, db, "c", false, `{}`, "2-bb", "1-aa")
	repl(t, db, "c", false, `{}`, "2-cc", "1-aa")
	var docs []*couchdoc.Doc
	for i := 0; i < 250; i++ {
		docs = append(docs, &couchdoc.Doc{ID: "d" + string(rune('a'+i%26)) + time.Duration(i).String()})
	}
	if _, err := db.BulkDocs(bg, docs, true); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(time.Hour) // not yet: PurgeExpired is given a later now
	for _, d := range append(docs, &couchdoc.Doc{ID: "c"}) {
		if err := db.SetExpiration(bg, d.ID, past); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.PurgeExpired(bg, past.Add(time.Second))
	if err != nil || n != 251 {
		t.Fatalf("purged %d, %v", n, err)
	}
	info, _ := db.Info(bg)
	if info.DocCount != 0 {
		t.Errorf("%d docs left", info.DocCount)
	}
}
