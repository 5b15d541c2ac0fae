package sync

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
)

// missingPeer is a memPeer whose database does not exist until Create.
// Create waits until Info was asked twice, so that both directions of a
// sync look before either creates it.
type missingPeer struct {
	*memPeer
	created atomic.Bool
	infos   atomic.Int32
}

func (p *missingPeer) Info(ctx context.Context) (*PeerInfo, error) {
	p.infos.Add(1)
	if !p.created.Load() {
		return nil, couchdoc.Errorf(couchdoc.ErrNotFound, "Database does not exist.")
	}
	return p.memPeer.Info(ctx)
}

func (p *missingPeer) Create(ctx context.Context) error {
	for i := 0; p.infos.Load() < 2 && i < 200; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	if p.created.Swap(true) {
		return couchdoc.ErrFileExists
	}
	return nil
}

// TestSyncCreatesMissingRemote: Sync with CreateTarget creates a missing
// remote, also when its pull finds the remote missing before its push
// made it; without CreateTarget it fails as not found.
func TestSyncCreatesMissingRemote(t *testing.T) {
	ctx := context.Background()
	local := newMemPeer("local")
	fill(local, 3)
	remote := &missingPeer{memPeer: newMemPeer("remote")}
	if _, err := Sync(ctx, local, remote, Options{Retries: -1}); !errors.Is(err, couchdoc.ErrNotFound) {
		t.Fatalf("sync to a missing remote without CreateTarget: %v", err)
	}
	res, err := Sync(ctx, local, remote, Options{CreateTarget: true, Retries: -1})
	if err != nil {
		t.Fatalf("sync with CreateTarget: %v", err)
	}
	if res.Push.Stats.DocsWritten != 3 || !remote.created.Load() {
		t.Fatalf("push wrote %d docs; remote created %v", res.Push.Stats.DocsWritten, remote.created.Load())
	}
}
