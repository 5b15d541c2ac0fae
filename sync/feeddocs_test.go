package sync

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/settee/settee/couchdoc"
)

func TestFeedDoc(t *testing.T) {
	h := "0123456789abcdef0123456789abcdef"
	row := func(doc string, revs ...string) *couchdoc.Change {
		c := &couchdoc.Change{Seq: json.RawMessage(`1`), ID: "d", Doc: json.RawMessage(doc)}
		for _, r := range revs {
			c.Changes = append(c.Changes, couchdoc.ChangeRev{Rev: r})
		}
		return c
	}
	d := feedDoc(row(`{"_id":"d","_rev":"1-`+h+`","x":1}`, "1-"+h))
	if d == nil || d.Revisions == nil || d.Revisions.Start != 1 || len(d.Revisions.IDs) != 1 || d.Revisions.IDs[0] != h || string(d.Body) != `{"x":1}` {
		t.Fatalf("a first-generation row: %+v", d)
	}
	if d := feedDoc(row(`{"_id":"d","_rev":"1-`+h+`","_deleted":true}`, "1-"+h)); d == nil || !d.Deleted {
		t.Fatalf("a first-generation tombstone: %+v", d)
	}
	for name, c := range map[string]*couchdoc.Change{
		"second generation": row(`{"_id":"d","_rev":"2-`+h+`"}`, "2-"+h),
		"two leaves":        row(`{"_id":"d","_rev":"1-`+h+`"}`, "1-"+h, "1-fedcba9876543210fedcba9876543210"),
		"attachments":       row(`{"_id":"d","_rev":"1-`+h+`","_attachments":{"a":{"stub":true,"digest":"md5-AAAA","length":1,"revpos":1}}}`, "1-"+h),
		"other rev":         row(`{"_id":"d","_rev":"1-fedcba9876543210fedcba9876543210"}`, "1-"+h),
		"other id":          row(`{"_id":"e","_rev":"1-`+h+`"}`, "1-"+h),
		"null doc":          row(`null`, "1-"+h),
		"no doc":            row(``, "1-"+h),
		"malformed":         row(`{"_id":"d","_rev":"1-`+h+`",}`, "1-"+h),
		"bad history":       row(`{"_id":"d","_rev":"1-`+h+`","_revisions":{"start":2,"ids":["`+h+`","aa"]}}`, "1-"+h),
	} {
		if d := feedDoc(c); d != nil {
			t.Errorf("%s: taken from the feed: %+v", name, d)
		}
	}
}

// tooLargeFeed refuses include_docs feeds as too large, as a server with
// a huge document would make the reader do.
type tooLargeFeed struct {
	*memPeer
	asked atomic.Int64
}

func (p *tooLargeFeed) Changes(ctx context.Context, opts ChangesOptions, fn func(*couchdoc.Change) error) (json.RawMessage, error) {
	if opts.IncludeDocs {
		p.asked.Add(1)
		return nil, couchdoc.Errorf(couchdoc.ErrTooLarge, "changes row larger than %d bytes", 8<<20)
	}
	return p.memPeer.Changes(ctx, opts, fn)
}

func TestFeedDocsTooLargeFallsBack(t *testing.T) {
	src, tgt := newMemPeer("src"), newMemPeer("tgt")
	for i := range 50 {
		src.put(fmt.Sprintf("d%02d", i), "", fmt.Sprintf(`{"i":%d}`, i))
	}
	feed := &tooLargeFeed{memPeer: src}
	res, err := Replicate(context.Background(), Options{Source: feed, Target: tgt, BatchSize: 20})
	if err != nil {
		t.Fatal(err)
	}
	if feed.asked.Load() != 1 || res.Stats.DocsWritten != 50 || tgt.leafCount() != 50 {
		t.Fatalf("include_docs asked %d times, stats %+v, target leaves %d", feed.asked.Load(), res.Stats, tgt.leafCount())
	}
}
