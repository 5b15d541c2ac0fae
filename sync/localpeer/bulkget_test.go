package localpeer_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/localpeer"
)

// TestBulkGet reads many documents in one call: answers in request order,
// conflicting leaves with Latest, per-revision errors naming the document,
// attachment bodies newer than AttsSince only (a large one streamed).
func TestBulkGet(t *testing.T) {
	ctx := context.Background()
	db := open(t, "a")
	var reqs []sync.BulkGetRequest
	for i := range 100 {
		id := fmt.Sprintf("d%03d", i)
		reqs = append(reqs, sync.BulkGetRequest{ID: id, Rev: put(t, db, id, "", fmt.Sprintf(`{"i":%d}`, i))})
	}
	r1 := put(t, db, "c", "", `{"v":1}`)
	r2 := put(t, db, "c", r1, `{"v":2}`)
	big := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // 128 KiB: streamed
	a1, err := db.Put(ctx, &couchdoc.Doc{ID: "att", Attachments: map[string]*couchdoc.Attachment{"old": {Data: []byte("old")}}})
	if err != nil {
		t.Fatal(err)
	}
	a2, err := db.Put(ctx, &couchdoc.Doc{ID: "att", Rev: a1, Attachments: map[string]*couchdoc.Attachment{
		"old": {Stub: true}, "big": {Data: big}}})
	if err != nil {
		t.Fatal(err)
	}
	reqs = append(reqs,
		sync.BulkGetRequest{ID: "c", Rev: r1}, // latest: r2
		sync.BulkGetRequest{ID: "c", Rev: "9-abc"},
		sync.BulkGetRequest{ID: "nope", Rev: "1-abc"},
		sync.BulkGetRequest{ID: "bad", Rev: "x"},
		sync.BulkGetRequest{ID: "att", Rev: a2, AttsSince: []string{a1}},
		sync.BulkGetRequest{ID: "d000", Rev: reqs[0].Rev},
	)
	var got []string
	err = localpeer.New(db).BulkGet(ctx, reqs, func(doc *couchdoc.Doc, err error) error {
		if err != nil {
			var re *wire.RevError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a RevError", err)
			}
			got = append(got, fmt.Sprintf("err %s %s %s", re.ID, re.Rev, re.Err.Name))
			return nil
		}
		s := fmt.Sprintf("%s %s %s", doc.ID, doc.Rev, doc.Body)
		if doc.Revisions == nil || doc.Revisions.Start != 1 && doc.Revisions.Start != 2 {
			t.Fatalf("%s: revisions %+v", doc.ID, doc.Revisions)
		}
		if a := doc.Attachments["old"]; a != nil && !a.Stub {
			t.Fatalf("old attachment sent: %+v", a)
		}
		if a := doc.Attachments["big"]; a != nil {
			b, err := io.ReadAll(a.Body)
			if err != nil || !bytes.Equal(b, big) {
				t.Fatalf("big: %d bytes, %v", len(b), err)
			}
			s += " big"
		}
		got = append(got, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 106 {
		t.Fatalf("%d answers: %v", len(got), got[100:])
	}
	for i := range 100 {
		if want := fmt.Sprintf(`d%03d %s {"i":%d}`, i, reqs[i].Rev, i); got[i] != want {
			t.Fatalf("answer %d: %s, want %s", i, got[i], want)
		}
	}
	want := []string{
		`c ` + r2 + ` {"v":2}`,
		`err c 9-abc not_found`,
		`err nope 1-abc not_found`,
		`err bad  bad_request`,
		`att ` + a2 + ` {} big`,
		`d000 ` + reqs[0].Rev + ` {"i":0}`,
	}
	if !slices.Equal(got[100:], want) {
		t.Fatalf("got %q\nwant %q", got[100:], want)
	}
	// fn's error ends the call.
	stop := errors.New("stop")
	calls := 0
	err = localpeer.New(db).BulkGet(ctx, reqs, func(*couchdoc.Doc, error) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}
