package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	gosync "sync"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/sync"
)

// discardPeer is a pull target that stores nothing: a fresh, empty store
// as far as the replicator can tell (same capabilities as package
// localpeer's, so the replicator sends the source the same requests), whose
// writes are read through (attachment bodies included, so their digests
// are still checked) and dropped. Our pull into it is the pull without the
// local store: what the source and the transfer cost, the floor of any
// store behind the same requests.
type discardPeer struct {
	mu     gosync.Mutex // the replicator's goroutines write checkpoints
	locals map[string]json.RawMessage
}

func newDiscardPeer() *discardPeer {
	return &discardPeer{locals: map[string]json.RawMessage{}}
}

func (p *discardPeer) String() string { return "discard" }

// UUID makes the replication id the same kind as with a local store.
func (p *discardPeer) UUID() string { return "bench-discard-target" }

// InlineAttachmentMax matches localpeer's, so that small attachment bodies
// are read into memory and written in batches, as in our real pulls.
func (p *discardPeer) InlineAttachmentMax() int64 { return 1 << 20 }

func (p *discardPeer) Info(ctx context.Context) (*sync.PeerInfo, error) {
	return &sync.PeerInfo{DBName: "discard", UpdateSeq: json.RawMessage(`0`)}, nil
}

func (p *discardPeer) GetLocal(ctx context.Context, id string) (json.RawMessage, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok := p.locals[id]; ok {
		return b, nil
	}
	return nil, couchdoc.ErrNotFound
}

func (p *discardPeer) PutLocal(ctx context.Context, id string, body json.RawMessage) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.locals[id] = append(json.RawMessage(nil), body...)
	return "0-1", nil
}

func (p *discardPeer) Changes(ctx context.Context, opts sync.ChangesOptions, fn func(*couchdoc.Change) error) (json.RawMessage, error) {
	return json.RawMessage(`0`), nil
}

// RevsDiff says everything is missing, as an empty store would.
func (p *discardPeer) RevsDiff(ctx context.Context, revs map[string][]string) (map[string]couchdoc.RevsDiffResult, error) {
	out := make(map[string]couchdoc.RevsDiffResult, len(revs))
	for id, rs := range revs {
		out[id] = couchdoc.RevsDiffResult{Missing: rs}
	}
	return out, nil
}

func (p *discardPeer) OpenRevs(ctx context.Context, id string, revs []string, attsSince []string, fn func(*couchdoc.Doc, error) error) error {
	return fmt.Errorf("discard target: OpenRevs %s: %w", id, couchdoc.ErrNotFound)
}

// BulkDocs drops the documents; the replicator counts them as written.
func (p *discardPeer) BulkDocs(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	return nil, nil
}

// PutDoc reads every streamed attachment body to its end (the reader
// checks its length and digest there) and drops it.
func (p *discardPeer) PutDoc(ctx context.Context, doc *couchdoc.Doc) error {
	for name, a := range doc.Attachments {
		if a.Body == nil {
			continue
		}
		if _, err := io.Copy(io.Discard, a.Body); err != nil {
			return fmt.Errorf("discard target: attachment %s of %s: %w", name, doc.ID, err)
		}
	}
	return nil
}

func (p *discardPeer) EnsureFullCommit(ctx context.Context) error { return nil }
