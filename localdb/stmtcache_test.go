package localdb_test

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// TestBatchSizesOfPreparedStatements writes batches whose sizes are not
// multiples of the prepared statements' sizes (multi-row INSERTs written as
// power-of-two pieces, preload queries padded by repeating an id), with new
// and stored documents interleaved so the buffer is flushed at every count.
func TestBatchSizesOfPreparedStatements(t *testing.T) {
	db := open(t)
	const first = 773 // preload 512 + 261 (padded to 512); inserts 7*100 + 64 + 8 + 1
	if res, err := db.BulkDocs(bg, replBatch(0, first), false); err != nil {
		t.Fatal(err)
	} else {
		for _, r := range res {
			if err := r.Err(); err != nil {
				t.Fatalf("%s: %v", r.ID, err)
			}
		}
	}
	want := make(map[string]string)
	for _, d := range replBatch(0, first) {
		want[d.ID] = d.Rev
	}
	// Second batch: stored documents get a second revision, each followed by
	// a growing run of new documents (1, 2, 3, ... rows buffered).
	var batch []*couchdoc.Doc
	next := first
	for i := 0; i < 40; i++ {
		id := fmt.Sprintf("doc-%08d", i*17)
		h := md5.Sum([]byte("second " + id))
		hash := hex.EncodeToString(h[:])
		old := want[id][2:]
		batch = append(batch, &couchdoc.Doc{ID: id, Rev: "2-" + hash, Body: []byte(`{"v":2}`),
			Revisions: &couchdoc.Revisions{Start: 2, IDs: []string{hash, old}}})
		want[id] = "2-" + hash
		for _, d := range replBatch(next, i+1) {
			batch = append(batch, d)
			want[d.ID] = d.Rev
		}
		next += i + 1
	}
	res, err := db.BulkDocs(bg, batch, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if err := r.Err(); err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
	}
	info, err := db.Info(bg)
	if err != nil {
		t.Fatal(err)
	}
	if info.DocCount != int64(len(want)) {
		t.Fatalf("doc_count %d, want %d", info.DocCount, len(want))
	}
	for id, rev := range want {
		doc, err := db.Get(bg, id, localdb.GetOptions{})
		if err != nil {
			t.Fatalf("get %s: %v", id, err)
		}
		if doc.Rev != rev {
			t.Fatalf("%s: rev %s, want %s", id, doc.Rev, rev)
		}
	}
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
}
