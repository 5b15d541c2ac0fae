package rtest

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/localdb"
)

// Rev is one leaf revision as a snapshot records it.
type Rev struct {
	Deleted bool
	// History is the revision path from this leaf to the oldest known
	// ancestor ("3-c", "2-b", "1-a").
	History []string
	// Body is the canonical JSON of the user's fields.
	Body string
	// Atts maps attachment names to "type|length|digest|md5 of the bytes".
	Atts map[string]string
}

// Snapshot is a database's revision forest: doc id -> leaf rev -> Rev.
type Snapshot map[string]map[string]Rev

// Leaves counts the leaf revisions of the snapshot.
func (s Snapshot) Leaves() int {
	n := 0
	for _, d := range s {
		n += len(d)
	}
	return n
}

// Diff lists the differences between two snapshots (at most max), empty when
// they are identical.
func Diff(a, b Snapshot, max int) []string {
	var out []string
	add := func(f string, args ...any) {
		if len(out) < max {
			out = append(out, fmt.Sprintf(f, args...))
		}
	}
	ids := map[string]bool{}
	for id := range a {
		ids[id] = true
	}
	for id := range b {
		ids[id] = true
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	for _, id := range sorted {
		da, db := a[id], b[id]
		if da == nil || db == nil {
			add("doc %q: only in one side (a has %d leaves, b %d)", id, len(da), len(db))
			continue
		}
		for rev, ra := range da {
			rb, ok := db[rev]
			if !ok {
				add("doc %q: leaf %s missing in b", id, rev)
				continue
			}
			if ra.Deleted != rb.Deleted {
				add("doc %q rev %s: deleted %v vs %v", id, rev, ra.Deleted, rb.Deleted)
			}
			if strings.Join(ra.History, ",") != strings.Join(rb.History, ",") {
				add("doc %q rev %s: history %v vs %v", id, rev, ra.History, rb.History)
			}
			if ra.Body != rb.Body {
				add("doc %q rev %s: body %s vs %s", id, rev, ra.Body, rb.Body)
			}
			if fmt.Sprint(ra.Atts) != fmt.Sprint(rb.Atts) {
				add("doc %q rev %s: attachments %v vs %v", id, rev, ra.Atts, rb.Atts)
			}
		}
		for rev := range db {
			if _, ok := da[rev]; !ok {
				add("doc %q: leaf %s missing in a", id, rev)
			}
		}
	}
	return out
}

// RequireEqual fails the test when the snapshots differ.
func RequireEqual(t testing.TB, what string, a, b Snapshot) {
	t.Helper()
	if d := Diff(a, b, 10); len(d) > 0 {
		t.Fatalf("%s: %d vs %d docs, %d vs %d leaves; first differences:\n  %s",
			what, len(a), len(b), a.Leaves(), b.Leaves(), strings.Join(d, "\n  "))
	}
}

func canonical(body []byte) (string, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return "{}", nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return "", err
	}
	if m, ok := v.(map[string]any); ok {
		for k := range m {
			if strings.HasPrefix(k, "_") {
				delete(m, k)
			}
		}
	}
	out, err := json.Marshal(v) // maps marshal with sorted keys
	return string(out), err
}

// attKey records an attachment as "type|digest|md5 of the bytes|length";
// a declared length (CouchDB omits it next to inline data) or digest that
// does not match the bytes fails the test.
func attKey(t testing.TB, where string, contentType string, length int64, digest string, data []byte) string {
	t.Helper()
	sum := md5.Sum(data)
	got := "md5-" + base64.StdEncoding.EncodeToString(sum[:])
	if length != 0 && length != int64(len(data)) {
		t.Errorf("%s: declared length %d, %d bytes", where, length, len(data))
	}
	if digest != got {
		t.Errorf("%s: digest %s, bytes have %s", where, digest, got)
	}
	return fmt.Sprintf("%s|%s|%s|%d", contentType, digest, got, len(data))
}

// LocalSnapshot reads every leaf of every document of a local store, with
// histories, bodies and attachment bytes.
func LocalSnapshot(ctx context.Context, t testing.TB, db *localdb.DB) Snapshot {
	t.Helper()
	type row struct {
		id   string
		revs []string
	}
	var rows []row
	if _, err := db.Changes(ctx, localdb.ChangesOptions{AllDocs: true}, func(c *localdb.Change) error {
		rows = append(rows, row{c.ID, append([]string(nil), c.Revs...)})
		return nil
	}); err != nil {
		t.Fatalf("snapshot %s: changes: %v", db.Path(), err)
	}
	snap := Snapshot{}
	for _, r := range rows {
		ors, err := db.OpenRevs(ctx, r.id, r.revs, localdb.GetOptions{Revs: true, Attachments: true})
		if err != nil {
			t.Fatalf("snapshot %s: open_revs %q: %v", db.Path(), r.id, err)
		}
		leaves := map[string]Rev{}
		for _, or := range ors {
			if or.Doc == nil {
				t.Fatalf("snapshot %s: leaf %s of %q listed by the feed but missing", db.Path(), or.Missing, r.id)
			}
			d := or.Doc
			body, err := canonical(d.Body)
			if err != nil {
				t.Fatalf("snapshot: body of %q: %v", r.id, err)
			}
			rv := Rev{Deleted: d.Deleted, Body: body, Atts: map[string]string{}}
			if d.Revisions != nil {
				rv.History = d.Revisions.History()
			}
			for name, a := range d.Attachments {
				data := a.Data
				if a.Body != nil {
					data, err = io.ReadAll(a.Body)
					if c, ok := a.Body.(io.Closer); ok {
						c.Close()
					}
					if err != nil {
						t.Fatalf("snapshot: attachment %q of %q: %v", name, r.id, err)
					}
				}
				rv.Atts[name] = attKey(t, r.id+"/"+name, a.ContentType, a.Length, a.Digest, data)
			}
			leaves[d.Rev] = rv
		}
		snap[r.id] = leaves
	}
	return snap
}

// remoteDoc is a document as CouchDB's JSON gives it.
type remoteDoc struct {
	Rev       string `json:"_rev"`
	Deleted   bool   `json:"_deleted"`
	Revisions *struct {
		Start int      `json:"start"`
		IDs   []string `json:"ids"`
	} `json:"_revisions"`
	Attachments map[string]struct {
		ContentType string `json:"content_type"`
		Digest      string `json:"digest"`
		Length      int64  `json:"length"`
		Data        []byte `json:"data"`
		Stub        bool   `json:"stub"`
	} `json:"_attachments"`
}

// RemoteSnapshot reads every leaf of every document of a CouchDB database
// with plain HTTP (changes with style=all_docs, then open_revs as JSON with
// revs and attachments), independently of sync/couch.
func RemoteSnapshot(ctx context.Context, t testing.TB, dbURL string) Snapshot {
	t.Helper()
	snap := Snapshot{}
	for _, r := range remoteFeed(ctx, t, dbURL, "snapshot") {
		rj, _ := json.Marshal(r.revs)
		u := dbURL + "/" + EscapeID(r.id) + "?revs=true&attachments=true&open_revs=" + url.QueryEscape(string(rj))
		var raw []map[string]json.RawMessage
		if st := testutil.DoJSON(ctx, t, "GET", u, nil, &raw); st != 200 {
			t.Fatalf("snapshot %s: open_revs %q: status %d", testutil.Redact(dbURL), r.id, st)
		}
		leaves := map[string]Rev{}
		for _, entry := range raw {
			okRaw, ok := entry["ok"]
			if !ok {
				t.Fatalf("snapshot %s: leaf of %q listed by the feed but missing: %s", testutil.Redact(dbURL), r.id, entry["missing"])
			}
			var d remoteDoc
			if err := json.Unmarshal(okRaw, &d); err != nil {
				t.Fatalf("snapshot: %q: %v", r.id, err)
			}
			body, err := canonical(okRaw)
			if err != nil {
				t.Fatalf("snapshot: body of %q: %v", r.id, err)
			}
			rv := Rev{Deleted: d.Deleted, Body: body, Atts: map[string]string{}}
			if d.Revisions != nil {
				for i, h := range d.Revisions.IDs {
					rv.History = append(rv.History, fmt.Sprintf("%d-%s", d.Revisions.Start-i, h))
				}
			}
			for name, a := range d.Attachments {
				if a.Stub {
					t.Fatalf("snapshot: %q/%s: stub although attachments=true", r.id, name)
				}
				rv.Atts[name] = attKey(t, r.id+"/"+name, a.ContentType, a.Length, a.Digest, a.Data)
			}
			leaves[d.Rev] = rv
		}
		snap[r.id] = leaves
	}
	return snap
}

// EscapeID escapes a document id for a URL path: wire.EscapeDocID.
func EscapeID(id string) string { return wire.EscapeDocID(id) }

var _ = couchdoc.ErrNotFound

// LocalWinners maps each document of a local store to its winning
// revision (deleted ones included), from the store's _all_docs.
func LocalWinners(ctx context.Context, t testing.TB, db *localdb.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	ids := []string{}
	for id := range LocalSnapshot(ctx, t, db) {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return out
	}
	if _, err := db.AllDocs(ctx, localdb.AllDocsOptions{Keys: ids}, func(r *localdb.AllDocsRow) error {
		out[r.ID] = r.Rev
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// RemoteWinners maps each document of a remote database to its winning
// revision (deleted ones included), from _all_docs with keys.
func RemoteWinners(ctx context.Context, t testing.TB, dbURL string, ids []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if len(ids) == 0 {
		return out
	}
	var res struct {
		Rows []struct {
			ID    string `json:"id"`
			Value struct {
				Rev string `json:"rev"`
			} `json:"value"`
		} `json:"rows"`
	}
	if st := testutil.DoJSON(ctx, t, "POST", dbURL+"/_all_docs", map[string]any{"keys": ids}, &res); st != http.StatusOK {
		t.Fatalf("POST _all_docs: %d", st)
	}
	for _, r := range res.Rows {
		if r.ID != "" {
			out[r.ID] = r.Value.Rev
		}
	}
	return out
}
