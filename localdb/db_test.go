package localdb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

func TestReopenKeepsUUIDAndData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	uuid := db.UUID()
	put(t, db, "a", "", `{"k":"v"}`)
	if err := db.SetRevsLimit(bg, 7); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Info(bg); !errors.Is(err, localdb.ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	db, err = localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.UUID() != uuid || len(uuid) != 32 || db.RevsLimit() != 7 || db.Path() != path {
		t.Fatalf("uuid %s vs %s, revs limit %d", db.UUID(), uuid, db.RevsLimit())
	}
	// One write and the revs_limit change (which moves it, as in CouchDB).
	if info, err := db.Info(bg); err != nil || info.UpdateSeq != 2 {
		t.Fatalf("update seq after reopen %+v %v", info, err)
	}
	if _, err := db.Get(bg, "a", localdb.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	other := open(t)
	if other.UUID() == uuid {
		t.Fatal("two databases share a uuid")
	}
}

func TestNewerSchemaIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", localdb.RawDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA user_version = %d", localdb.SchemaVersion()+1)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	before := fileState(t, path)
	_, err = localdb.Open(path, nil)
	if !errors.Is(err, localdb.ErrNewerStore) || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("open of a newer schema: %v", err)
	}
	if after := fileState(t, path); after != before {
		t.Fatal("the refused file changed")
	}
}

// TestConcurrent runs writers, readers and a feed follower at once; run it
// with -race. The invariants are checked at cleanup.
func TestConcurrent(t *testing.T) {
	db := open(t)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	var wg gosync.WaitGroup
	const writers, per = 4, 12
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				id := fmt.Sprintf("w%d-%d", w, i%5)
				doc, err := db.Get(ctx, id, localdb.GetOptions{})
				rev := ""
				if err == nil {
					rev = doc.Rev
				}
				if _, err := db.Put(ctx, &couchdoc.Doc{ID: id, Rev: rev, Body: []byte(fmt.Sprintf(`{"i":%d}`, i))}); err != nil {
					t.Error(err)
					return
				}
				db.BulkDocs(ctx, []*couchdoc.Doc{replDoc(t, "shared", false, `{}`, fmt.Sprintf("1-%x", w*1000+i))}, false)
			}
		}()
	}
	followed := make(chan int64, 1)
	go func() {
		since, _ := db.Follow(ctx, 0, localdb.FollowOptions{Feed: localdb.FeedContinuous,
			ChangesOptions: localdb.ChangesOptions{AllDocs: true}}, func(*localdb.Change) error { return nil })
		followed <- since
	}()
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				db.AllDocs(ctx, localdb.AllDocsOptions{IncludeDocs: true}, func(*localdb.AllDocsRow) error { return nil })
				db.RevsDiff(ctx, map[string][]string{"shared": {"1-1", "2-2"}})
			}
		}()
	}
	wg.Wait()
	cancel()
	<-followed
	info, _ := db.Info(bg)
	if info.DocCount != writers*5+1 {
		t.Fatalf("doc count %d", info.DocCount)
	}
	if got := len(leaves(t, db, "shared")); got != writers*per {
		t.Fatalf("shared has %d leaves", got)
	}
}

func TestCloseWaitsForReaders(t *testing.T) {
	db, err := localdb.Open(filepath.Join(t.TempDir(), "x.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		put(t, db, fmt.Sprintf("d%d", i), "", `{}`)
	}
	started := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := db.Changes(bg, localdb.ChangesOptions{}, func(*localdb.Change) error {
			select {
			case <-started:
			default:
				close(started)
				<-release
			}
			return nil
		})
		done <- err
	}()
	<-started
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("feed in flight during Close: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// TestMigrateFromV1 rewinds a file to schema version 1 and reopens it: the
// version 2 migration computes the document counts from the documents.
func TestMigrateFromV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	put(t, db, "a", "", `{}`)
	r := put(t, db, "b", "", `{}`)
	db.Delete(bg, "b", r)
	db.Close()
	raw, err := sql.Open("sqlite", localdb.RawDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	// Undo versions 8 (fresh entries), 6 (kept downloads), 5 (lazy
	// attachments), 3 (purge, expiry) and 2 (counts).
	if _, err := raw.Exec(`ALTER TABLE att_chunks DROP COLUMN crc; DROP INDEX att_content_chunks; ALTER TABLE att_content DROP COLUMN chunks; DROP TABLE mango_fresh; DELETE FROM meta WHERE key = 'mango_fresh_rows'; DROP TABLE att_partial; DROP TRIGGER att_bytes_update; DROP TRIGGER att_bytes_insert; DROP TRIGGER att_bytes_delete; ALTER TABLE att_content DROP COLUMN present;
		ALTER TABLE rev_atts DROP COLUMN missing; ALTER TABLE rev_atts DROP COLUMN encoding;
		DROP TABLE purged_infos; DROP TABLE expirations;
		DELETE FROM meta WHERE key IN ('purge_seq', 'purged_infos_limit', 'seq_floor', 'external_bytes');
		DROP TRIGGER revs_bytes_insert; DROP TRIGGER revs_bytes_delete;
		DELETE FROM meta WHERE key IN ('doc_count', 'doc_del_count'); PRAGMA user_version = 1`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db, err = localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	info, err := db.Info(bg)
	if err != nil || info.DocCount != 1 || info.DocDelCount != 1 {
		t.Fatalf("info after migration %+v %v", info, err)
	}
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRejectsNonDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database ", 200)), 0o600); err != nil {
		t.Fatal(err)
	}
	if db, err := localdb.Open(path, nil); err == nil {
		db.Close()
		t.Fatal("opened a file that is not a database")
	}
}
