package synctest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	gosync "sync"
	"testing"

	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
)

// feedRecorder is an http.RoundTripper noting, per _changes request,
// whether it asked for include_docs, and counting the revisions asked for
// in _bulk_get bodies.
type feedRecorder struct {
	mu        gosync.Mutex
	withDocs  []bool
	bulkItems int
}

func (f *feedRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	switch endpoint(req.URL) {
	case "_changes":
		f.mu.Lock()
		f.withDocs = append(f.withDocs, req.URL.Query().Get("include_docs") == "true")
		f.mu.Unlock()
	case "_bulk_get":
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		var body struct {
			Docs []json.RawMessage `json:"docs"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.bulkItems += len(body.Docs)
		f.mu.Unlock()
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	return http.DefaultTransport.RoundTrip(req)
}

// seedRev is a replicated revision with its history, newest first.
func seedRev(id string, deleted bool, body map[string]any, ids ...string) map[string]any {
	d := map[string]any{"_id": id, "_rev": fmt.Sprintf("%d-%s", len(ids), ids[0]),
		"_revisions": map[string]any{"start": len(ids), "ids": ids}}
	for k, v := range body {
		d[k] = v
	}
	if deleted {
		d["_deleted"] = true
	}
	return d
}

// remoteVia opens a couch peer on dbURL sending through rt.
func remoteVia(t testing.TB, dbURL string, rt http.RoundTripper) sync.Peer {
	t.Helper()
	p, err := couch.New(dbURL, &couch.Options{Transport: rt})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func hexID(tag, i int) string { return fmt.Sprintf("%08x%024x", tag, i) }

// testFirstPull checks the first pull into an empty store: revisions the
// changes feed carries in full (first generation, one leaf, no
// attachments) are not fetched again, everything else is, and the store
// ends up with the remote's trees; on a history-heavy source the fast path
// turns itself off after one batch.
func testFirstPull(t *testing.T, newDB Factory) {
	u := newDB(t)
	var docs []any
	for i := range 150 {
		docs = append(docs, seedRev(fmt.Sprintf("g1-%03d", i), false, map[string]any{"n": i}, hexID(1, i)))
	}
	for i := range 10 { // second generation: history to fetch
		docs = append(docs, seedRev(fmt.Sprintf("g2-%03d", i), false, map[string]any{"n": i}, hexID(2, i), hexID(3, i)))
	}
	for i := range 5 { // two first-generation leaves
		docs = append(docs, seedRev(fmt.Sprintf("cf-%03d", i), false, map[string]any{"side": "a"}, hexID(4, i)))
		docs = append(docs, seedRev(fmt.Sprintf("cf-%03d", i), false, map[string]any{"side": "b"}, hexID(5, i)))
	}
	for i := range 5 { // first-generation tombstones: carried in full
		docs = append(docs, seedRev(fmt.Sprintf("del-%03d", i), true, nil, hexID(6, i)))
	}
	for i := range 3 { // attachments: stubs in the feed, fetched
		d := seedRev(fmt.Sprintf("att-%03d", i), false, map[string]any{"n": i}, hexID(7, i))
		d["_attachments"] = map[string]any{"a.txt": map[string]any{"content_type": "text/plain", "data": "aGVsbG8="}}
		docs = append(docs, d)
	}
	if st := testutil.DoJSON(context.Background(), t, "POST", u+"/_bulk_docs", map[string]any{"new_edits": false, "docs": docs}, nil); st != 201 {
		t.Fatalf("seed: %d", st)
	}

	rec := &feedRecorder{}
	src := remoteVia(t, u, rec)
	db := localdbtest.OpenNamed(t, "first", nil)
	res := replicate(t, sync.Options{Source: src, Target: Local(db), BatchSize: 100})
	if want := 10 + 2*5 + 3; rec.bulkItems != want {
		t.Fatalf("_bulk_get asked for %d revisions, want %d (the ones the feed does not carry)", rec.bulkItems, want)
	}
	if !rec.withDocs[0] || res.Stats.DocsWritten != 150+10+10+5+3 {
		t.Fatalf("include_docs per _changes %v, stats %+v", rec.withDocs, res.Stats)
	}
	ctx := context.Background()
	var err error
	for _, id := range []string{"g1-007", "g2-003", "cf-001", "att-001"} {
		rd, _ := RemoteGet(t, u, id)
		rev, conflicts := leaves(t, db, id)
		rc := slices.Clone(rd.Conflicts)
		slices.Sort(rc)
		if rev != rd.Rev || !slices.Equal(conflicts, rc) {
			t.Fatalf("%s: local %s %v, remote %s %v", id, rev, conflicts, rd.Rev, rc)
		}
	}
	del, err := db.Get(ctx, "del-002", localdb.GetOptions{Rev: "1-" + hexID(6, 2)})
	if err != nil || !del.Deleted {
		t.Fatalf("del-002: %v %+v", err, del)
	}
	if info, err := db.Info(ctx); err != nil || info.DocCount != 150+10+5+3 || info.DocDelCount != 5 {
		t.Fatalf("local info %+v %v", info, err)
	}
	d, err := db.Get(ctx, "g1-007", localdb.GetOptions{Revs: true})
	if err != nil || !bytes.Contains(d.Body, []byte(`"n":7`)) || d.Revisions == nil || len(d.Revisions.IDs) != 1 {
		t.Fatalf("g1-007: %v %s %+v", err, d.Body, d.Revisions)
	}
	d, err = db.Get(ctx, "g2-003", localdb.GetOptions{Revs: true})
	if err != nil || d.Revisions == nil || len(d.Revisions.IDs) != 2 {
		t.Fatalf("g2-003 lost its history: %v %+v", err, d.Revisions)
	}

	// History-heavy: once a batch where most rows need a fetch is seen,
	// include_docs is asked no more.
	u2 := newDB(t)
	docs = docs[:0]
	for i := range 60 {
		docs = append(docs, seedRev(fmt.Sprintf("h-%03d", i), false, map[string]any{"n": i}, hexID(8, i), hexID(9, i)))
	}
	if st := testutil.DoJSON(context.Background(), t, "POST", u2+"/_bulk_docs", map[string]any{"new_edits": false, "docs": docs}, nil); st != 201 {
		t.Fatalf("seed: %d", st)
	}
	rec2 := &feedRecorder{}
	src2 := remoteVia(t, u2, rec2)
	res = replicate(t, sync.Options{Source: src2, Target: Local(localdbtest.OpenNamed(t, "heavy", nil)), BatchSize: 20})
	n := 0
	for _, w := range rec2.withDocs {
		if w {
			n++
		}
	}
	// The reader runs a batch ahead of the one judged: at most two ask.
	if n < 1 || n > 2 || len(rec2.withDocs) < 3 || rec2.withDocs[len(rec2.withDocs)-1] || res.Stats.DocsWritten != 60 || rec2.bulkItems != 60 {
		t.Fatalf("history-heavy: include_docs per _changes %v, %d revisions fetched, stats %+v", rec2.withDocs, rec2.bulkItems, res.Stats)
	}
}
