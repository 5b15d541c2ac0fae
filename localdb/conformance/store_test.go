package conformance_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
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
}

// checkInvariants runs the store's CheckInvariants (TEMPORARY: optional
// until localdb has it).
func checkInvariants(ctx context.Context, db any) error {
	if c, ok := db.(interface{ CheckInvariants(context.Context) error }); ok {
		return c.CheckInvariants(ctx)
	}
	return nil
}

var _ store = (*localdb.DB)(nil)

// openStore opens a fresh store that is closed, after an invariant check,
// when the test ends.
func openStore(t testing.TB) store {
	t.Helper()
	db, err := localdb.Open(filepath.Join(t.TempDir(), "conformance.db"), nil)
	if err != nil {
		t.Fatalf("localdb.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := checkInvariants(context.Background(), db); err != nil {
			t.Errorf("localdb CheckInvariants at the end: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("localdb Close: %v", err)
		}
	})
	return db
}
