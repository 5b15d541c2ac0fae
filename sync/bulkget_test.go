package sync

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
)

// garbledBulkGet has a working _bulk_get whose first answer arrives
// garbled (it does not parse, and carries a 400 status as every malformed
// payload does).
type garbledBulkGet struct {
	*memPeer
	bulkGets, openRevs atomic.Int32
}

func (p *garbledBulkGet) BulkGet(ctx context.Context, reqs []BulkGetRequest, fn func(*couchdoc.Doc, error) error) error {
	if p.bulkGets.Add(1) == 1 {
		return &wire.MalformedError{What: "_bulk_get answer", Err: errors.New("invalid character '}'")}
	}
	for _, rq := range reqs {
		if err := p.memPeer.OpenRevs(ctx, rq.ID, []string{rq.Rev}, rq.AttsSince, fn); err != nil {
			return err
		}
	}
	return nil
}

func (p *garbledBulkGet) OpenRevs(ctx context.Context, id string, revs []string, attsSince []string, fn func(*couchdoc.Doc, error) error) error {
	p.openRevs.Add(1)
	return p.memPeer.OpenRevs(ctx, id, revs, attsSince, fn)
}

// TestGarbledBulkGetKeepsBulkGet: one garbled _bulk_get answer is retried
// as such; it does not switch the session to one open_revs per document.
func TestGarbledBulkGetKeepsBulkGet(t *testing.T) {
	src, tgt := &garbledBulkGet{memPeer: newMemPeer("src")}, newMemPeer("tgt")
	fill(src.memPeer, 30)
	res, err := Replicate(context.Background(), Options{Source: src, Target: tgt, BatchSize: 10, Workers: 1,
		RetryDelay: time.Millisecond})
	if err != nil || res.Stats.DocsWritten != 30 {
		t.Fatalf("%v %+v", err, res)
	}
	if src.openRevs.Load() != 0 || src.bulkGets.Load() != 4 {
		t.Fatalf("after one garbled answer: %d _bulk_get requests, %d open_revs; want 4 and 0",
			src.bulkGets.Load(), src.openRevs.Load())
	}
}
