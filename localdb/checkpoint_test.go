package localdb_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

func walSize(t testing.TB, db *localdb.DB) int64 {
	t.Helper()
	fi, err := os.Stat(db.Path() + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// burst writes commits of 40 replicated 1-KB documents and returns the
// largest WAL size seen after a commit.
func burst(t testing.TB, db *localdb.DB, commits int) (peak int64) {
	t.Helper()
	for i := 0; i < commits; i++ {
		res, err := db.BulkDocs(bg, replBatch(i*40, 40), false)
		if err != nil || !res[39].OK {
			t.Fatal(err, res[39])
		}
		peak = max(peak, walSize(t, db))
	}
	return peak
}

func openFile(t *testing.T) *localdb.DB {
	t.Helper()
	db, err := localdb.Open(filepath.Join(t.TempDir(), "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// With the writer's bound out of reach, the commits never checkpoint
// (the WAL grows past SQLite's 4 MB auto-checkpoint while the background
// is paused), and the background checkpointer, once woken by a commit,
// copies the WAL into the database file.
func TestWALCheckpointedInBackground(t *testing.T) {
	db := openFile(t)
	db.PauseCheckpointer(true)
	db.SetWALBounds(1<<20, 1<<40)
	if peak := burst(t, db, 400); peak < 12<<20 {
		t.Fatalf("WAL peaked at %d bytes for ~18 MB written: a commit checkpointed", peak)
	}
	db.PauseCheckpointer(false)
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "wake", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		fi, err := os.Stat(db.Path())
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() >= 15<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("database file holds %d bytes: the WAL was not copied back", fi.Size())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Under a long write burst (about 18 MB in 400 commits) the WAL stays
// within the writer's bound, and every document is there after a reopen.
func TestWALBoundedUnderBurst(t *testing.T) {
	db := openFile(t)
	db.SetWALBounds(1<<20, 6<<20)
	const slack = 1 << 20 // one commit past the bound
	if peak := burst(t, db, 400); peak > 6<<20+slack {
		t.Fatalf("WAL reached %d bytes, want <= the 6 MB bound + one commit", peak)
	}
	path := db.Path()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	info, err := db2.Info(bg)
	if err != nil || info.DocCount != 400*40 {
		t.Fatalf("after reopen: %+v, %v; want %d docs", info, err, 400*40)
	}
}

// With the checkpointer stalled, the writer's own checkpoint bounds the
// WAL; below that bound no commit checkpoints (SQLite's auto-checkpoint
// would have at 4 MB).
func TestWALHardBound(t *testing.T) {
	db := openFile(t)
	db.PauseCheckpointer(true)
	db.SetWALBounds(1<<20, 8<<20)
	peak := burst(t, db, 400)
	const slack = 1 << 20 // one commit past the bound
	if peak > 8<<20+slack {
		t.Fatalf("WAL reached %d bytes, want <= the 8 MB bound + one commit", peak)
	}
	if peak < 6<<20 {
		t.Fatalf("WAL peaked at %d bytes: a commit below the hard bound checkpointed", peak)
	}
}

// Close stops the checkpointer's goroutine and closes its connection.
func TestCloseStopsCheckpointer(t *testing.T) {
	db := openFile(t)
	db.SetWALBounds(1, 1<<40) // wake it after every commit
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "a", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if db.CheckpointerStopped() {
		t.Fatal("checkpointer not running while open")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if !db.CheckpointerStopped() {
		t.Fatal("checkpointer still running after Close")
	}
}
