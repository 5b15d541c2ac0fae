package query

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	gosync "sync"

	"github.com/settee/settee/internal/jsfunc"
	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/internal/viewstore"
)

// Views of a store are kept in files of their own (package viewstore), in
// the directory ViewDir names beside the store, one per design document
// signature. A view is brought up to date when it is queried (update=true,
// CouchDB's default): the changes since the sequence its file reflects
// are mapped, a batch at a time.

// ViewDir is the directory of the view files of the store at path.
func ViewDir(path string) string { return path + ".views" }

// viewBatch is how many documents an update maps per transaction of the
// view file.
const viewBatch = 1000

var (
	// runtimes are the JavaScript runtimes, one pool per store and design
	// document, shared by every handle of the process.
	runtimes = jsfunc.NewPools(nil, runtime.GOMAXPROCS(0))
	// fileLocks serialise the updates of one view file in this process
	// (SQLite serialises them between processes).
	fileLocks gosync.Map // path -> *gosync.Mutex
)

// poolFor returns the runtime pool of a design document of db.
func poolFor(db *localdb.DB, ddocID string) *jsfunc.Pool {
	return runtimes.For(db.UUID() + "\x00" + ddocID)
}

// openFiles keeps the view files of plain stores this process opened, by
// path: opening one (its schema check and first reads) would
// otherwise cost every query more than the query itself.
var (
	openMu    gosync.Mutex
	openFiles = map[string]*viewstore.File{}
)

// openView opens the view file of dv, or returns the one already open.
// The returned func releases it (the file stays open for the next query).
func openView(ctx context.Context, db *localdb.DB, dv *designViews) (*viewstore.File, func(), error) {
	path := filepath.Join(ViewDir(db.Path()), dv.Sig+".view")
	params, err := db.SideFileDSN(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open view index: %w", err)
	}
	if params != "" {
		// An encrypted store's files go through its VFS, which must have
		// none open when the store closes: no cache.
		f, err := viewstore.Open(ctx, path, dv.Sig, params)
		if err != nil {
			return nil, nil, fmt.Errorf("open view index: %w", err)
		}
		return f, func() { f.Close() }, nil
	}
	key := path + "\x00"
	openMu.Lock()
	defer openMu.Unlock()
	if f := openFiles[key]; f != nil {
		return f, func() {}, nil
	}
	f, err := viewstore.Open(ctx, path, dv.Sig, params)
	if err != nil {
		return nil, nil, fmt.Errorf("open view index: %w", err)
	}
	openFiles[key] = f
	return f, func() {}, nil
}

// CloseViews closes the view files of the store at path this process
// keeps open (before the store's files are deleted).
func CloseViews(path string) {
	dir := ViewDir(path) + string(filepath.Separator)
	openMu.Lock()
	defer openMu.Unlock()
	for k, f := range openFiles {
		if strings.HasPrefix(k, dir) {
			f.Close()
			delete(openFiles, k)
		}
	}
}

// closeView closes the open file at path (any DSN parameters).
func closeView(path string) {
	openMu.Lock()
	defer openMu.Unlock()
	for k, f := range openFiles {
		if strings.HasPrefix(k, path+"\x00") {
			f.Close()
			delete(openFiles, k)
		}
	}
}

// updateView maps the changes of db since the file's sequence into f.
func updateView(ctx context.Context, db *localdb.DB, dv *designViews, f *viewstore.File) error {
	path := filepath.Join(ViewDir(db.Path()), dv.Sig+".view")
	m, _ := fileLocks.LoadOrStore(path, &gosync.Mutex{})
	mu := m.(*gosync.Mutex)
	mu.Lock()
	defer mu.Unlock()
	since, err := f.Seq(ctx)
	if err != nil {
		return err
	}
	info, err := db.Info(ctx)
	if err != nil {
		return err
	}
	if info.UpdateSeq <= since {
		return nil
	}
	pool := poolFor(db, dv.ID)
	rt, err := pool.Get()
	if err != nil {
		return err
	}
	defer func() { pool.Put(rt) }()
	maps := make([]string, len(dv.Views))
	for i, v := range dv.Views {
		maps[i] = v.Map
	}
	if err := rt.SetMaps(maps, dv.Lib); err != nil {
		return fmt.Errorf("%w (in design document %s)", err, dv.ID)
	}
	batch, err := f.Begin(ctx)
	if err != nil {
		return err
	}
	n := 0
	var buf, key []byte
	viewSeqs := map[int]int64{}
	last, err := db.Changes(ctx, localdb.ChangesOptions{Since: since, IncludeDocs: true, Conflicts: true, AllDocs: true}, func(c *localdb.Change) error {
		if err := batch.RemoveDoc(c.ID, func(v int) { viewSeqs[v] = 0 }); err != nil {
			return err
		}
		if !c.Deleted && c.Doc != nil && (dv.IncludeDesign || !mango.IsDesignID(c.ID)) {
			doc := *c.Doc
			if len(c.Revs) > 1 {
				// Map functions see _deleted_conflicts too, which the feed
				// does not carry.
				d, err := db.Get(ctx, c.ID, localdb.GetOptions{Rev: c.Revs[0], Conflicts: true, DeletedConflicts: true})
				if err != nil {
					return err
				}
				doc = *d
			}
			if dv.LocalSeq {
				doc.LocalSeq = c.Seq
			}
			if buf, err = doc.AppendJSON(buf[:0]); err != nil {
				return err
			}
			rows, err := rt.Map(buf)
			if err != nil {
				return fmt.Errorf("map %s: %w", c.ID, err)
			}
			for vi, emits := range rows {
				if len(emits) > 0 {
					viewSeqs[vi] = 0
				}
				for k, e := range emits {
					if key, err = encodeKey(key[:0], e.Key); err != nil {
						return err
					}
					if err := batch.Add(vi, key, c.ID, k, e.Key, e.Value); err != nil {
						return err
					}
				}
			}
		}
		n++
		if n%viewBatch == 0 {
			if err := batch.Commit(c.Seq, batchSeqs(viewSeqs, c.Seq)); err != nil {
				return err
			}
			clear(viewSeqs)
			if batch, err = f.Begin(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		batch.Rollback()
		return err
	}
	if since == 0 {
		// A first build gives every view the sequence it reached, as
		// CouchDB does; later updates move only the views they change.
		for vi := range dv.Views {
			viewSeqs[vi] = max(last, since)
		}
	}
	return batch.Commit(max(last, since), batchSeqs(viewSeqs, max(last, since)))
}

// batchSeqs gives the views a batch changed the sequence it reached: as
// in CouchDB, a view's update_seq is where the update that last changed
// its rows ended, not the change that did it.
func batchSeqs(touched map[int]int64, seq int64) map[int]int64 {
	for v := range touched {
		touched[v] = seq
	}
	return touched
}

// encodeKey appends the collation encoding of a JSON view key.
func encodeKey(dst []byte, key json.RawMessage) ([]byte, error) {
	return mango.EncodeViewKey(dst, key)
}
