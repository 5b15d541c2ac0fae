package conformance_test

import (
	"context"
	"io"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
)

// store is the part of *localdb.DB the differential test drives.
type store interface {
	Put(ctx context.Context, doc *couchdoc.Doc) (string, error)
	Delete(ctx context.Context, id, rev string) (string, error)
	BulkDocs(ctx context.Context, docs []*couchdoc.Doc, newEdits bool) ([]couchdoc.DocResult, error)
	Get(ctx context.Context, id string, opts localdb.GetOptions) (*couchdoc.Doc, error)
	OpenRevs(ctx context.Context, id string, revs []string, opts localdb.GetOptions) ([]localdb.OpenRev, error)
	RevsDiff(ctx context.Context, revs map[string][]string) (map[string]couchdoc.RevsDiffResult, error)
	Changes(ctx context.Context, opts localdb.ChangesOptions, fn func(*localdb.Change) error) (int64, error)
	AllDocs(ctx context.Context, opts localdb.AllDocsOptions, fn func(*localdb.AllDocsRow) error) (int64, error)
	Conflicts(ctx context.Context, fn func(id string) error) error
	OpenAttachment(ctx context.Context, id, rev, name string) (*couchdoc.Attachment, io.ReadCloser, error)
	Compact(ctx context.Context) error
	CheckInvariants(ctx context.Context) error
}

var _ store = (*localdb.DB)(nil)

// openStore opens a fresh store; localdbtest checks its invariants and
// closes it when the test ends.
func openStore(t testing.TB) store { return localdbtest.Open(t) }
