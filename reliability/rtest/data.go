package rtest

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
)

// TrickyIDs are document ids that break naive URL building.
var TrickyIDs = []string{"a/b", "../up", "..%2F..%2Fetc", "%2F", "sp ace", "q?x=1#frag", "amp&eq=", "ü-é-✓", "plus+sign", "semi;colon", "back\\slash"}

// Gen makes the revisions of n documents (prefix + number, and the tricky
// ids when tricky is set) as new_edits=false writes: every leaf with its
// _revisions, a few generations deep, about one in six with a conflicting
// branch, one in eight deleted, one in seven with attachments (two of them
// bigger than 64 KiB when big is set). Each returned Doc is one leaf.
func Gen(rng *rand.Rand, prefix string, n int, tricky, big bool) []*couchdoc.Doc {
	ids := make([]string, 0, n+len(TrickyIDs))
	for i := 0; i < n; i++ {
		ids = append(ids, fmt.Sprintf("%s%05d", prefix, i))
	}
	if tricky {
		for _, id := range TrickyIDs {
			ids = append(ids, prefix+id)
		}
	}
	var out []*couchdoc.Doc
	bigLeft := 0
	if big {
		bigLeft = 2
	}
	for i, id := range ids {
		gen := 1 + rng.Intn(3)
		trunk := make([]string, gen) // newest first
		for j := range trunk {
			trunk[j] = randHash(rng)
		}
		leaf := func(start int, hashes []string, deleted bool) *couchdoc.Doc {
			d := &couchdoc.Doc{
				ID:        id,
				Rev:       fmt.Sprintf("%d-%s", start, hashes[0]),
				Deleted:   deleted,
				Revisions: &couchdoc.Revisions{Start: start, IDs: hashes},
				Body:      json.RawMessage(fmt.Sprintf(`{"i":%d,"gen":%d,"s":%q}`, i, start, randText(rng, 20+rng.Intn(200)))),
			}
			if !deleted && rng.Intn(7) == 0 {
				d.Attachments = map[string]*couchdoc.Attachment{}
				for k := 0; k < 1+rng.Intn(2); k++ {
					size := 1 + rng.Intn(3000)
					if bigLeft > 0 && k == 0 {
						size = 70<<10 + rng.Intn(40<<10)
						bigLeft--
					}
					d.Attachments[fmt.Sprintf("att %d.bin", k)] = NewAttachment(rng, size, start)
				}
			}
			return d
		}
		out = append(out, leaf(gen, trunk, rng.Intn(8) == 0))
		if gen > 1 && rng.Intn(5) == 0 { // a true conflict: one write, one more leaf
			bgen := 2 + rng.Intn(2)
			branch := []string{}
			for j := 0; j < bgen-1; j++ {
				branch = append(branch, randHash(rng))
			}
			branch = append(branch, trunk[len(trunk)-1]) // shares the first revision
			out = append(out, leaf(bgen, branch, rng.Intn(4) == 0))
		}
	}
	return out
}

// NewAttachment makes an inline attachment of size random bytes.
func NewAttachment(rng *rand.Rand, size, revpos int) *couchdoc.Attachment {
	data := make([]byte, size)
	rng.Read(data)
	sum := md5.Sum(data)
	return &couchdoc.Attachment{
		ContentType: "application/octet-stream",
		Data:        data,
		Length:      int64(size),
		Digest:      "md5-" + base64.StdEncoding.EncodeToString(sum[:]),
		RevPos:      revpos,
	}
}

func randHash(rng *rand.Rand) string {
	b := make([]byte, 16)
	rng.Read(b)
	return hex.EncodeToString(b)
}

func randText(rng *rand.Rand, n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz éü✓\"\\/"
	r := []rune(letters)
	out := make([]rune, n)
	for i := range out {
		out[i] = r[rng.Intn(len(r))]
	}
	return string(out)
}

// WriteLocal writes docs to a store with new_edits=false and fails the test
// on any refusal.
func WriteLocal(ctx context.Context, t testing.TB, db *localdb.DB, docs []*couchdoc.Doc) {
	t.Helper()
	for len(docs) > 0 {
		n := min(len(docs), 200)
		res, err := db.BulkDocs(ctx, docs[:n], false)
		if err != nil {
			t.Fatalf("write local: %v", err)
		}
		for _, r := range res {
			if r.Error != "" {
				t.Fatalf("write local %q: %s: %s", r.ID, r.Error, r.Reason)
			}
		}
		docs = docs[n:]
	}
}

// WriteRemote writes docs to a CouchDB database with POST _bulk_docs and
// new_edits=false, with plain HTTP.
func WriteRemote(ctx context.Context, t testing.TB, dbURL string, docs []*couchdoc.Doc) {
	t.Helper()
	for len(docs) > 0 {
		n := min(len(docs), 100)
		var buf bytes.Buffer
		buf.WriteString(`{"new_edits":false,"docs":[`)
		for i, d := range docs[:n] {
			if i > 0 {
				buf.WriteByte(',')
			}
			b, err := d.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(b)
		}
		buf.WriteString(`]}`)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, dbURL+"/_bulk_docs", &buf)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("write remote: %v", err)
		}
		var res []couchdoc.DocResult
		err = json.NewDecoder(resp.Body).Decode(&res)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated || err != nil {
			t.Fatalf("write remote: status %d, %v", resp.StatusCode, err)
		}
		for _, r := range res {
			if r.Error != "" {
				t.Fatalf("write remote %q: %s: %s", r.ID, r.Error, r.Reason)
			}
		}
		docs = docs[n:]
	}
}

// RemoteUpdateSeq returns a remote database's update_seq as an integer
// (pouchdb-server and our server use integers).
func RemoteUpdateSeq(ctx context.Context, t testing.TB, dbURL string) int64 {
	t.Helper()
	var info struct {
		UpdateSeq json.RawMessage `json:"update_seq"`
	}
	if st := testutil.DoJSON(ctx, t, "GET", dbURL, nil, &info); st != 200 {
		t.Fatalf("info %s: status %d", testutil.Redact(dbURL), st)
	}
	var n int64
	if err := json.Unmarshal(info.UpdateSeq, &n); err != nil {
		t.Fatalf("info %s: update_seq %s is not an integer", testutil.Redact(dbURL), info.UpdateSeq)
	}
	return n
}
