package query

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// ViewIndexInfo is the view_index member of CouchDB's _design/x/_info.
type ViewIndexInfo struct {
	UpdatesPending struct {
		Minimum   int64 `json:"minimum"`
		Preferred int64 `json:"preferred"`
		Total     int64 `json:"total"`
	} `json:"updates_pending"`
	WaitingCommit  bool  `json:"waiting_commit"`
	WaitingClients int   `json:"waiting_clients"`
	UpdaterRunning bool  `json:"updater_running"`
	UpdateSeq      int64 `json:"update_seq"`
	Sizes          struct {
		File     int64 `json:"file"`
		External int64 `json:"external"`
		Active   int64 `json:"active"`
	} `json:"sizes"`
	Signature      string   `json:"signature"`
	PurgeSeq       int64    `json:"purge_seq"`
	Language       string   `json:"language"`
	CompactRunning bool     `json:"compact_running"`
	Collators      []string `json:"collator_versions"`
}

// DesignInfo is CouchDB's _design/x/_info answer.
type DesignInfo struct {
	Name      string        `json:"name"`
	ViewIndex ViewIndexInfo `json:"view_index"`
}

// ViewInfo describes the view index of design document ddoc (its name,
// without _design/) without updating it; the store's not_found when the
// design document is missing.
func ViewInfo(ctx context.Context, db *localdb.DB, ddoc string) (*DesignInfo, error) {
	dv, err := loadViews(ctx, db, ddoc)
	if err != nil {
		return nil, err
	}
	info := &DesignInfo{Name: ddoc}
	vi := &info.ViewIndex
	vi.Signature, vi.Language, vi.Collators = dv.Sig, dv.Language, []string{}
	path := filepath.Join(ViewDir(db.Path()), dv.Sig+".view")
	if _, err := os.Stat(path); err == nil {
		f, closeFile, err := openView(ctx, db, dv)
		if err != nil {
			return nil, err
		}
		defer closeFile()
		if vi.UpdateSeq, err = f.Seq(ctx); err != nil {
			return nil, err
		}
		vi.Sizes.File = f.Size()
		vi.Sizes.Active = vi.Sizes.File
	}
	if n, err := db.PendingChanges(ctx, vi.UpdateSeq); err == nil {
		vi.UpdatesPending.Minimum, vi.UpdatesPending.Preferred, vi.UpdatesPending.Total = n, n, n
	}
	return info, nil
}

// ViewCleanup removes the view files no design document of db uses any
// more (CouchDB's _view_cleanup).
func ViewCleanup(ctx context.Context, db *localdb.DB) error {
	keep := map[string]bool{}
	_, err := db.AllDocs(ctx, localdb.AllDocsOptions{StartKey: couchdoc.DesignPrefix, EndKey: "_design0", ExclusiveEnd: true}, func(row *localdb.AllDocsRow) error {
		dv, err := loadViews(ctx, db, strings.TrimPrefix(row.ID, couchdoc.DesignPrefix))
		if err == nil {
			keep[dv.Sig+".view"] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(ViewDir(db.Path()))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		base := strings.TrimSuffix(strings.TrimSuffix(name, "-wal"), "-shm")
		if !strings.HasSuffix(base, ".view") || keep[base] {
			continue
		}
		closeView(filepath.Join(ViewDir(db.Path()), base))
		if err := os.Remove(filepath.Join(ViewDir(db.Path()), name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
