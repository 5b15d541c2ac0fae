package wire_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/couchcorpus"
	"github.com/settee/settee/internal/wire"
)

// TestReadChangesSparseCouchDB35 reads CouchDB 3.5.0's recorded answer to
// _changes?seq_interval=10&limit=25: most rows, the last one too, carry
// "seq": null. The sparse reader hands out every row (nil Seq where null)
// and the feed's last_seq; the strict reader refuses the feed.
func TestReadChangesSparseCouchDB35(t *testing.T) {
	exchanges, err := couchcorpus.ReadExchanges("requests.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var body []byte
	for i := range exchanges {
		if e := &exchanges[i]; e.Method == "GET" && strings.Contains(e.Query, "seq_interval=10") {
			body = e.ResponseBody()
		}
	}
	if body == nil {
		t.Fatal("no recorded _changes?seq_interval answer")
	}
	var rows, withSeq int
	last, pending, err := wire.ReadChangesSparse(bytes.NewReader(body), func(c *couchdoc.Change) error {
		rows++
		if c.Seq != nil {
			withSeq++
		}
		if c.ID == "" || len(c.Changes) == 0 {
			t.Errorf("row %d: %+v", rows, c)
		}
		return nil
	})
	if err != nil || rows != 25 || withSeq != 2 || !bytes.HasPrefix(last, []byte(`"25-`)) || pending != 274 {
		t.Fatalf("rows %d (%d with seq), last_seq %s, pending %d, err %v", rows, withSeq, last, pending, err)
	}
	var me *wire.MalformedError
	if _, _, err := wire.ReadChangesPending(bytes.NewReader(body), func(*couchdoc.Change) error { return nil }); !errors.As(err, &me) {
		t.Fatalf("strict reader: %v", err)
	}
}

// TestReadChangesSparseRefuses: a sparse feed still needs ids, non-empty
// revs, seqs that are seqs where given, and a last_seq.
func TestReadChangesSparseRefuses(t *testing.T) {
	for _, body := range []string{
		`{"results": [{"seq": null, "changes": [{"rev": "1-a"}]}], "last_seq": "1-x"}`,
		`{"results": [{"seq": null, "id": "a", "changes": [{"rev": ""}]}], "last_seq": "1-x"}`,
		`{"results": [{"seq": {}, "id": "a", "changes": [{"rev": "1-a"}]}], "last_seq": "1-x"}`,
		`{"results": [{"seq": null, "id": "a", "changes": [{"rev": "1-a"}]}]}`,
		`{"results": [{"seq": null, "id": "a", "changes": [{"rev": "1-a"}]}], "last_seq": null}`,
	} {
		var me *wire.MalformedError
		if _, _, err := wire.ReadChangesSparse(strings.NewReader(body), func(*couchdoc.Change) error { return nil }); !errors.As(err, &me) {
			t.Errorf("%s: %v", body, err)
		}
	}
	n := 0
	if _, _, err := wire.ReadChangesSparse(strings.NewReader(`{"results": [{"id": "a", "changes": [{"rev": "1-a"}]}, {"seq": 7, "id": "b", "changes": [{"rev": "1-b"}]}], "last_seq": 7}`),
		func(*couchdoc.Change) error { n++; return nil }); err != nil || n != 2 {
		t.Fatalf("rows without seq and with one: %d %v", n, err)
	}
}
