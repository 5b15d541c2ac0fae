package couch

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testpeer"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/sync"
)

func digest(b []byte) string {
	s := md5.Sum(b)
	return "md5-" + base64.StdEncoding.EncodeToString(s[:])
}

func hash(c byte) string { return strings.Repeat(string(c), 32) }

// newDoc is a replicated revision: rev gen-hash(c) with a history of
// gen revisions.
func newDoc(id string, gen int, c byte, body string) *couchdoc.Doc {
	ids := make([]string, gen)
	for i := range ids {
		ids[i] = hash(c + byte(i))
	}
	ids[0] = hash(c)
	return &couchdoc.Doc{ID: id, Rev: fmt.Sprintf("%d-%s", gen, hash(c)), Body: []byte(body),
		Revisions: &couchdoc.Revisions{Start: gen, IDs: ids}}
}

type fetched struct {
	doc  *couchdoc.Doc
	err  error
	atts map[string][]byte
}

// collectDocs reads every attachment (inline or streamed) inside fn.
func collectDocs(out *[]fetched) func(*couchdoc.Doc, error) error {
	return func(doc *couchdoc.Doc, revErr error) error {
		f := fetched{doc: doc, err: revErr, atts: map[string][]byte{}}
		if doc != nil {
			for n, a := range doc.Attachments {
				switch {
				case a.Body != nil:
					b, err := io.ReadAll(a.Body)
					if err != nil {
						return err
					}
					f.atts[n] = b
				case a.Data != nil:
					f.atts[n] = a.Data
				}
			}
		}
		*out = append(*out, f)
		return nil
	}
}

func TestPouchDB(t *testing.T) {
	s := testpeer.PouchDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var dbN int
	open := func(t *testing.T, create bool) *DB {
		t.Helper()
		dbN++
		db, err := New(fmt.Sprintf("%s/db-%d", s.URL, dbN), &Options{Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if create {
			if err := db.Create(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return db
	}

	t.Run("InfoCreate", func(t *testing.T) {
		db := open(t, false)
		if _, err := db.Info(ctx); !errors.Is(err, couchdoc.ErrNotFound) || !strings.Contains(err.Error(), db.String()) {
			t.Fatalf("Info of a missing db: %v", err)
		}
		if err := db.Create(ctx); err != nil {
			t.Fatal(err)
		}
		if err := db.Create(ctx); !errors.Is(err, couchdoc.ErrFileExists) {
			t.Fatalf("second Create: %v", err)
		}
		info, err := db.Info(ctx)
		if err != nil || info.DBName != fmt.Sprintf("db-%d", dbN) || string(info.UpdateSeq) != "0" {
			t.Fatalf("info %+v, %v", info, err)
		}
		if err := db.EnsureFullCommit(ctx); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("BulkDocsChangesRevsDiffFetch", func(t *testing.T) {
		db := open(t, true)
		docs := []*couchdoc.Doc{newDoc("a", 2, 'a', `{"n":1}`), newDoc("b", 1, 'b', `{"n":2}`), newDoc("c", 3, 'c', `{"n":3}`)}
		docs[2].Deleted = true
		conflict := newDoc("a", 2, 'd', `{"n":"conflict"}`)
		conflict.Revisions.IDs[1] = hash('b') // shares a's first revision
		docs = append(docs, conflict)
		failed, err := db.BulkDocs(ctx, docs)
		if err != nil || len(failed) != 0 {
			t.Fatalf("BulkDocs: %v %+v", err, failed)
		}
		var rows []*couchdoc.Change
		last, err := db.Changes(ctx, sync.ChangesOptions{}, func(c *couchdoc.Change) error { rows = append(rows, c); return nil })
		if err != nil || len(rows) != 3 || len(last) == 0 {
			t.Fatalf("Changes: %v, %d rows, last %s", err, len(rows), last)
		}
		for _, r := range rows {
			if r.ID == "a" && len(r.Changes) != 2 {
				t.Errorf("style=all_docs lists both leaves of a: %+v", r)
			}
			if r.ID == "c" && !r.Deleted {
				t.Errorf("c not deleted: %+v", r)
			}
		}
		// limit and since
		var n int
		last1, err := db.Changes(ctx, sync.ChangesOptions{Limit: 1}, func(*couchdoc.Change) error { n++; return nil })
		if err != nil || n != 1 {
			t.Fatalf("limit 1: %v %d", err, n)
		}
		n = 0
		if _, err := db.Changes(ctx, sync.ChangesOptions{Since: last1}, func(*couchdoc.Change) error { n++; return nil }); err != nil || n != 2 {
			t.Fatalf("since %s: %v %d", last1, err, n)
		}

		diff, err := db.RevsDiff(ctx, map[string][]string{"a": {docs[0].Rev, "3-" + hash('e')}, "b": {docs[1].Rev}, "z": {"1-" + hash('f')}})
		if err != nil {
			t.Fatal(err)
		}
		if len(diff) != 2 || len(diff["a"].Missing) != 1 || diff["a"].Missing[0] != "3-"+hash('e') || len(diff["z"].Missing) != 1 {
			t.Fatalf("RevsDiff: %+v", diff)
		}

		// pouchdb-server 4.2.0 crashes on latest=true with an unknown rev of
		// an existing document, so the missing rev is of a missing document.
		var got []fetched
		err = db.OpenRevs(ctx, "a", []string{docs[0].Rev, conflict.Rev}, nil, collectDocs(&got))
		if err == nil {
			err = db.OpenRevs(ctx, "nope", []string{"9-" + hash('f')}, nil, collectDocs(&got))
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 {
			t.Fatalf("OpenRevs: %d answers", len(got))
		}
		var okN, missing int
		for _, g := range got {
			switch {
			case g.doc != nil:
				okN++
				if g.doc.Revisions == nil || g.doc.Revisions.Start != 2 || len(g.doc.Revisions.IDs) != 2 {
					t.Errorf("revisions of %s: %+v", g.doc.Rev, g.doc.Revisions)
				}
			case errors.Is(g.err, couchdoc.ErrNotFound):
				missing++
			}
		}
		if okN != 2 || missing != 1 {
			t.Fatalf("OpenRevs: %d docs, %d missing", okN, missing)
		}

		got = nil
		err = db.BulkGet(ctx, []sync.BulkGetRequest{{ID: "a", Rev: conflict.Rev}, {ID: "c", Rev: docs[2].Rev}, {ID: "nope", Rev: "1-" + hash('f')}}, collectDocs(&got))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].doc == nil || string(got[0].doc.Body) != `{"n":"conflict"}` || got[1].doc == nil || !got[1].doc.Deleted {
			t.Fatalf("BulkGet: %+v", got)
		}
		var re *wire.RevError
		if got[2].doc != nil || !errors.As(got[2].err, &re) {
			t.Fatalf("BulkGet of a missing doc: %+v", got[2])
		}
	})

	t.Run("Local", func(t *testing.T) {
		db := open(t, true)
		id := "repl/ü+?#%"
		if _, err := db.GetLocal(ctx, id); !errors.Is(err, couchdoc.ErrNotFound) {
			t.Fatalf("GetLocal missing: %v", err)
		}
		rev, err := db.PutLocal(ctx, id, json.RawMessage(`{"session_id":"s1","history":[]}`))
		if err != nil || rev != "0-1" {
			t.Fatalf("PutLocal: %q %v", rev, err)
		}
		body, err := db.GetLocal(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil || m["_id"] != "_local/"+id || m["session_id"] != "s1" || m["_rev"] != "0-1" {
			t.Fatalf("GetLocal: %s %v", body, err)
		}
		if _, err := db.PutLocal(ctx, id, json.RawMessage(`{"session_id":"s2"}`)); !errors.Is(err, couchdoc.ErrConflict) {
			t.Fatalf("PutLocal without _rev: %v", err)
		}
		rev, err = db.PutLocal(ctx, id, json.RawMessage(`{"_rev":"0-1","session_id":"s2"}`))
		if err != nil || rev != "0-2" {
			t.Fatalf("PutLocal update: %q %v", rev, err)
		}
	})

	t.Run("Feeds", func(t *testing.T) {
		db := open(t, true)
		if _, err := db.BulkDocs(ctx, []*couchdoc.Doc{newDoc("x", 1, 'a', `{"type":"t","v":1}`), newDoc("y", 1, 'b', `{"type":"u"}`), newDoc("z/1", 1, 'c', `{"type":"t","v":2}`)}); err != nil {
			t.Fatal(err)
		}
		ids := func(opts sync.ChangesOptions) []string {
			t.Helper()
			var out []string
			if _, err := db.Changes(ctx, opts, func(c *couchdoc.Change) error { out = append(out, c.ID); return nil }); err != nil {
				t.Fatalf("%+v: %v", opts, err)
			}
			return out
		}
		if got := ids(sync.ChangesOptions{DocIDs: []string{"z/1", "y"}}); len(got) != 2 || strings.Join(got, ",") == "x" {
			t.Errorf("doc_ids: %v", got)
		}
		// filter=_selector crashes pouchdb-server 4.2.0 (it looks for
		// _design/_selector): TestChangesRequests checks that request.
		// longpoll: nothing after last_seq, so the timeout ends it empty
		last, _ := db.Changes(ctx, sync.ChangesOptions{}, func(*couchdoc.Change) error { return nil })
		if got := ids(sync.ChangesOptions{Feed: "longpoll", Since: last, Timeout: 300 * time.Millisecond}); len(got) != 0 {
			t.Errorf("longpoll after last: %v", got)
		}
		// longpoll wakes up for a write
		done := make(chan []string, 1)
		go func() {
			var out []string
			_, err := db.Changes(ctx, sync.ChangesOptions{Feed: "longpoll", Since: last, Timeout: 20 * time.Second}, func(c *couchdoc.Change) error { out = append(out, c.ID); return nil })
			if err != nil {
				out = append(out, "error: "+err.Error())
			}
			done <- out
		}()
		time.Sleep(200 * time.Millisecond)
		if _, err := db.BulkDocs(ctx, []*couchdoc.Doc{newDoc("w", 1, 'd', `{}`)}); err != nil {
			t.Fatal(err)
		}
		if got := <-done; len(got) != 1 || got[0] != "w" {
			t.Errorf("longpoll: %v", got)
		}
		// continuous with a timeout: the server ends the feed
		if got := ids(sync.ChangesOptions{Feed: "continuous", Timeout: 300 * time.Millisecond, Heartbeat: 100 * time.Millisecond}); len(got) != 4 {
			t.Errorf("continuous with timeout: %v", got)
		}
		// continuous without a timeout: runs until ctx is done
		cctx, ccancel := context.WithCancel(ctx)
		var seen []string
		_, err := db.Changes(cctx, sync.ChangesOptions{Feed: "continuous", Heartbeat: 100 * time.Millisecond}, func(c *couchdoc.Change) error {
			seen = append(seen, c.ID)
			if len(seen) == 4 {
				ccancel()
			}
			return nil
		})
		ccancel()
		if !errors.Is(err, context.Canceled) || len(seen) != 4 {
			t.Errorf("continuous: %v %v", err, seen)
		}
		// an error from fn stops the feed and comes back as is
		stop := errors.New("stop")
		if _, err := db.Changes(ctx, sync.ChangesOptions{Feed: "continuous"}, func(*couchdoc.Change) error { return stop }); err != stop {
			t.Errorf("fn error: %v", err)
		}
	})

	t.Run("AttachmentsAndEscaping", func(t *testing.T) {
		db := open(t, true)
		big := bytes.Repeat([]byte("settee attachment "), 80000) // 1.4 MB
		small := []byte("hello attachment")
		for _, id := range []string{"plain", "a/b", "a+b", "100%", "what?", "#hash", "café ☕", "_design/app", "sp ace"} {
			doc := newDoc(id, 1, 'a', `{"id":`+fmt.Sprintf("%q", id)+`}`)
			big := big
			if id != "plain" && id != "café ☕" {
				big = big[:1000] // keep the test fast: pouchdb-server is slow with base64
			}
			doc.Attachments = map[string]*couchdoc.Attachment{
				"small.txt":   {ContentType: "text/plain", Data: small, Digest: digest(small), Length: int64(len(small)), RevPos: 1},
				"dir/big.bin": {ContentType: "application/octet-stream", Body: bytes.NewReader(big), Length: int64(len(big)), Digest: digest(big), RevPos: 1},
			}
			if err := db.PutDoc(ctx, doc); err != nil {
				t.Fatalf("PutDoc %q: %v", id, err)
			}
			for _, fetch := range []string{"open_revs", "bulk_get"} {
				var got []fetched
				var err error
				if fetch == "open_revs" {
					err = db.OpenRevs(ctx, id, []string{doc.Rev}, nil, collectDocs(&got))
				} else {
					err = db.BulkGet(ctx, []sync.BulkGetRequest{{ID: id, Rev: doc.Rev}}, collectDocs(&got))
				}
				if err != nil || len(got) != 1 || got[0].doc == nil {
					t.Fatalf("%s %q: %v %+v", fetch, id, err, got)
				}
				if got[0].doc.ID != id || !bytes.Equal(got[0].atts["dir/big.bin"], big) || !bytes.Equal(got[0].atts["small.txt"], small) {
					t.Fatalf("%s %q: id %q, big %d bytes, small %q", fetch, id, got[0].doc.ID, len(got[0].atts["dir/big.bin"]), got[0].atts["small.txt"])
				}
			}
		}
		// a stub-only update (JSON PUT) keeps the attachment
		doc := newDoc("plain", 2, 'b', `{"v":2}`)
		doc.Revisions.IDs[1] = hash('a')
		doc.Attachments = map[string]*couchdoc.Attachment{"small.txt": {Stub: true, ContentType: "text/plain", Digest: digest(small), Length: int64(len(small)), RevPos: 1}}
		if err := db.PutDoc(ctx, doc); err != nil {
			t.Fatal(err)
		}
		var got []fetched
		if err := db.OpenRevs(ctx, "plain", []string{doc.Rev}, []string{"1-" + hash('a')}, collectDocs(&got)); err != nil {
			t.Fatal(err)
		}
		// pouchdb-server ignores atts_since (CouchDB sends a stub): either
		// form must be right
		if a := got[0].doc.Attachments["small.txt"]; a == nil || !a.Stub && !bytes.Equal(got[0].atts["small.txt"], small) {
			t.Fatalf("atts_since: small.txt = %+v", a)
		}
		// a streamed body shorter than its Length is refused before it reaches the peer
		bad := newDoc("bad", 1, 'c', `{}`)
		bad.Attachments = map[string]*couchdoc.Attachment{"x": {Body: strings.NewReader("abc"), Length: 10}}
		if err := db.PutDoc(ctx, bad); !errors.Is(err, couchdoc.ErrDigestMismatch) {
			t.Fatalf("short body: %v", err)
		}
	})

	t.Run("Counting", func(t *testing.T) {
		var events []RequestEvent
		db, err := New(s.URL+"/counted", &Options{Observer: func(e RequestEvent) { events = append(events, e) }})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Create(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.BulkDocs(ctx, []*couchdoc.Doc{newDoc("a", 1, 'a', `{}`)}); err != nil {
			t.Fatal(err)
		}
		st := db.Stats()
		if st.Requests != 2 || len(events) != 2 || events[1].Method != "POST" || events[1].Path != "/counted/_bulk_docs" || events[1].BytesSent == 0 || events[1].BytesReceived == 0 {
			t.Fatalf("stats %+v, events %+v", st, events)
		}
	})
}
