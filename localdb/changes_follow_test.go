package localdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
)

// follow runs db.Follow in a goroutine; the rows arrive on the channel,
// the end on done.
type followed struct {
	rows chan *localdb.Change
	done chan error
	last int64
}

func startFollow(db *localdb.DB, ctx context.Context, since int64, opts localdb.FollowOptions) *followed {
	f := &followed{rows: make(chan *localdb.Change, 100), done: make(chan error, 1)}
	go func() {
		last, err := db.Follow(ctx, since, opts, func(c *localdb.Change) error {
			f.rows <- c
			return nil
		})
		f.last = last
		close(f.rows)
		f.done <- err
	}()
	return f
}

func (f *followed) next(t *testing.T) *localdb.Change {
	t.Helper()
	select {
	case c := <-f.rows:
		if c == nil {
			t.Fatal("feed ended")
		}
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("no row")
	}
	return nil
}

func TestFollowFeeds(t *testing.T) {
	db := open(t)
	put(t, db, "a", "", `{}`)
	// normal: the rows so far.
	var got []string
	last, err := db.Follow(bg, 0, localdb.FollowOptions{}, func(c *localdb.Change) error {
		got = append(got, c.ID)
		return nil
	})
	if err != nil || last != 1 || len(got) != 1 {
		t.Fatalf("normal: %v %d %v", got, last, err)
	}
	// longpoll: waits for the next commit, gives it and ends.
	f := startFollow(db, bg, 1, localdb.FollowOptions{Feed: localdb.FeedLongpoll})
	put(t, db, "_local/x", "", `{}`) // local docs do not wake the feed
	put(t, db, "b", "", `{}`)
	if c := f.next(t); c.ID != "b" || c.Seq != 2 {
		t.Fatalf("longpoll row %+v", c)
	}
	if err := <-f.done; err != nil || f.last != 2 {
		t.Fatalf("longpoll end %d %v", f.last, err)
	}
	// longpoll with a timeout and nothing new: no rows, the position kept.
	last, err = db.Follow(bg, 2, localdb.FollowOptions{Feed: localdb.FeedLongpoll, Timeout: 10 * time.Millisecond}, func(*localdb.Change) error {
		t.Fatal("row after a timeout")
		return nil
	})
	if err != nil || last != 2 {
		t.Fatalf("longpoll timeout %d %v", last, err)
	}
	// continuous with a limit across passes, and a filter that drops rows.
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	f = startFollow(db, ctx, 0, localdb.FollowOptions{Feed: localdb.FeedContinuous,
		ChangesOptions: localdb.ChangesOptions{Limit: 4, Filter: func(d *couchdoc.Doc) bool { return d.ID != "skip" }}})
	f.next(t)
	f.next(t)
	put(t, db, "skip", "", `{}`)
	put(t, db, "c", "", `{}`)
	if c := f.next(t); c.ID != "c" {
		t.Fatalf("continuous row %+v", c)
	}
	put(t, db, "d", "", `{}`)
	if c := f.next(t); c.ID != "d" {
		t.Fatalf("continuous row %+v", c)
	}
	if err := <-f.done; err != nil || f.last != 5 {
		t.Fatalf("continuous end at the limit %d %v", f.last, err)
	}
	// continuous ends with ctx's error and its position; then with ErrClosed.
	f = startFollow(db, ctx, 5, localdb.FollowOptions{Feed: localdb.FeedContinuous})
	cancel()
	if err := <-f.done; !errors.Is(err, context.Canceled) || f.last != 5 {
		t.Fatalf("cancelled feed %d %v", f.last, err)
	}
	db2, err := localdb.Open(filepath.Join(t.TempDir(), "y.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	f = startFollow(db2, bg, 0, localdb.FollowOptions{Feed: localdb.FeedContinuous})
	time.Sleep(20 * time.Millisecond) // let it wait (either way it must end)
	db2.Close()
	if err := <-f.done; !errors.Is(err, localdb.ErrClosed) {
		t.Fatalf("feed of a closed db: %v", err)
	}
}

// TestFollowSeesOtherConnections: a feed wakes for commits made through a
// second DB on the same file at once, and for another process's within a
// second, in each watch mode (WatchLocal: this process's only), through
// the file notification and through its fallback.
func TestFollowSeesOtherConnections(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   localdb.Options
		broken bool // the file notification cannot be set up
	}{
		{"notify", localdb.Options{PollInterval: time.Hour}, false}, // only the notification can deliver
		{"notify-fallback", localdb.Options{PollInterval: 200 * time.Millisecond}, true},
		{"poll", localdb.Options{Watch: localdb.WatchPoll}, false},
		{"local", localdb.Options{Watch: localdb.WatchLocal}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			localdb.BreakNotify(tc.broken)
			defer localdb.BreakNotify(false)
			dir := t.TempDir()
			path := filepath.Join(dir, "x.db")
			opts := tc.opts
			db, err := localdb.Open(path, &opts)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			// The same file through another path: still this process's.
			other, err := localdb.Open(filepath.Join(dir, ".", "x.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			f := startFollow(db, ctx, 0, localdb.FollowOptions{Feed: localdb.FeedContinuous})
			time.Sleep(50 * time.Millisecond) // let it wait
			put(t, other, "same-process", "", `{}`)
			if c := f.next(t); c.ID != "same-process" {
				t.Fatalf("row %+v", c)
			}
			time.Sleep(50 * time.Millisecond)
			writeFromProcess(t, path)
			written := time.Now()
			// The latency bound is the live phases' to measure: a loaded
			// machine can stretch any wake-up. Without its notification,
			// "notify" (an hour-long poll) would never see the row.
			wait := 10 * time.Second
			if tc.opts.Watch == localdb.WatchLocal {
				wait = 1500 * time.Millisecond
			}
			select {
			case c := <-f.rows:
				if tc.opts.Watch == localdb.WatchLocal {
					t.Fatalf("WatchLocal saw another process's write: %+v", c)
				}
				if c.ID != "other-process" || c.Seq != 2 {
					t.Fatalf("row %+v", c)
				}
				t.Logf("another process's commit reached the feed after %s", time.Since(written))
			case <-time.After(wait):
				if tc.opts.Watch != localdb.WatchLocal {
					t.Fatalf("another process's commit did not reach the feed in %s", wait)
				}
			}
			cancel()
			<-f.done
		})
	}
}

// writeFromProcess has another process (this test binary) write one
// document to the store at path.
func writeFromProcess(t *testing.T, path string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFollowWriterProcess$")
	cmd.Env = append(os.Environ(), "SETTEE_TEST_WRITE="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writer process: %v\n%s", err, out)
	}
}

// TestFollowIdleNoPolling: a feed waiting on a store nobody writes makes
// no check past its first with the file notification (the watcher polled
// ten times a second), and one per interval when polling.
func TestFollowIdleNoPolling(t *testing.T) {
	for _, mode := range []localdb.WatchMode{localdb.WatchNotify, localdb.WatchPoll} {
		db, err := localdb.Open(filepath.Join(t.TempDir(), "x.db"), &localdb.Options{Watch: mode, PollInterval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		put(t, db, "a", "", `{}`)
		ctx, cancel := context.WithCancel(bg)
		f := startFollow(db, ctx, 1, localdb.FollowOptions{Feed: localdb.FeedContinuous})
		time.Sleep(100 * time.Millisecond)
		before := db.WatchChecks()
		time.Sleep(500 * time.Millisecond)
		n := db.WatchChecks() - before
		if mode == localdb.WatchNotify && (before < 1 || n != 0) {
			t.Fatalf("notify: %d checks while waiting, %d in the idle half second; want 1+ and 0", before, n)
		}
		if mode == localdb.WatchPoll && n < 2 { // ten at 50 ms on a quiet machine; a loaded one delays ticks
			t.Fatalf("poll: %d checks in half a second at 50 ms", n)
		}
		cancel()
		<-f.done
		db.Close()
	}
	if _, err := localdb.Open(filepath.Join(t.TempDir(), "x.db"), &localdb.Options{Watch: 7}); !errors.Is(err, couchdoc.ErrBadRequest) {
		t.Fatalf("unknown watch mode: %v", err)
	}
}

// TestFollowWriterProcess is the other process of
// TestFollowSeesOtherConnections: it writes one document and exits.
func TestFollowWriterProcess(t *testing.T) {
	path := os.Getenv("SETTEE_TEST_WRITE")
	if path == "" {
		t.Skip("run by TestFollowSeesOtherConnections")
	}
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "other-process", Body: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestChangeJSON(t *testing.T) {
	c := &localdb.Change{Seq: 7, ID: "a", Revs: []string{"2-x", "2-y"}, Deleted: true,
		Doc: &couchdoc.Doc{ID: "a", Rev: "2-x", Deleted: true, Body: json.RawMessage(`{}`)}}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seq":7,"id":"a","changes":[{"rev":"2-x"},{"rev":"2-y"}],"deleted":true,"doc":{"_id":"a","_rev":"2-x","_deleted":true}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

// BenchmarkWatchCheck is the cost of one tick of the commit watcher (a
// PRAGMA data_version on its connection) against a read of the feed's
// head through Info, on a store of 1,000 documents.
func BenchmarkWatchCheck(b *testing.B) {
	db, err := localdb.Open(filepath.Join(b.TempDir(), "w.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	docs := make([]*couchdoc.Doc, 1000)
	for i := range docs {
		docs[i] = &couchdoc.Doc{ID: fmt.Sprintf("d%04d", i), Body: json.RawMessage(`{"n":1}`)}
	}
	if _, err := db.BulkDocs(bg, docs, true); err != nil {
		b.Fatal(err)
	}
	b.Run("data_version", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := db.DataVersion(bg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("info", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := db.Info(bg); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestFollowLimitAfterWake: a longpoll or continuous feed woken by a commit
// of more rows than its limit gives the limit and returns the last given
// row's sequence, not the sequence it woke at: resuming from there gives
// the rest. (It returned the wake's sequence, so a replication reading
// its source in batches skipped the rows past its batch size.)
func TestFollowLimitAfterWake(t *testing.T) {
	for _, feed := range []localdb.Feed{localdb.FeedLongpoll, localdb.FeedContinuous} {
		db := open(t)
		f := startFollow(db, bg, 0, localdb.FollowOptions{Feed: feed, ChangesOptions: localdb.ChangesOptions{Limit: 4}})
		time.Sleep(20 * time.Millisecond) // let it wait
		docs := make([]*couchdoc.Doc, 10)
		for i := range docs {
			docs[i] = &couchdoc.Doc{ID: fmt.Sprintf("d%02d", i), Body: []byte(`{}`)}
		}
		if _, err := db.BulkDocs(bg, docs, true); err != nil {
			t.Fatal(err)
		}
		var got []string
		for c := range f.rows {
			got = append(got, c.ID)
		}
		if err := <-f.done; err != nil || len(got) != 4 || f.last != 4 {
			t.Fatalf("feed %d: %v, position %d, %v; want 4 rows, position 4", feed, got, f.last, err)
		}
		rest, err := db.Follow(bg, f.last, localdb.FollowOptions{}, func(c *localdb.Change) error {
			got = append(got, c.ID)
			return nil
		})
		if err != nil || len(got) != 10 || rest != 10 {
			t.Fatalf("feed %d, resumed: %v, position %d, %v; want all 10", feed, got, rest, err)
		}
	}
}

// TestWatcherOwnCommits: a continuous feed on a store this process writes
// keeps one commit watcher (it outlives the feed's waits between rows)
// and reads the feed's head for its baseline only: this process's commits
// wake the feed directly, and the file events they cause find the writer's
// data_version unmoved. Another process's commit still reaches the feed.
func TestWatcherOwnCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := localdb.Open(path, &localdb.Options{PollInterval: time.Hour}) // only the notification can deliver
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	f := startFollow(db, ctx, 0, localdb.FollowOptions{Feed: localdb.FeedContinuous})
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("d%02d", i)
		put(t, db, id, "", `{}`)
		if c := f.next(t); c.ID != id {
			t.Fatalf("row %+v, want %s", c, id)
		}
		time.Sleep(30 * time.Millisecond) // the commit's file events reach the watcher
	}
	if n := db.WatchStarts(); n != 1 {
		t.Fatalf("the watcher started %d times for one feed; want 1", n)
	}
	// A check that found the writer busy for longer than its bound asks
	// the watcher's connection, where this process's commits show: a
	// loaded machine may cause one or two.
	if n := db.HeadReads(); n > 3 {
		t.Fatalf("%d reads of the feed's head for 20 commits of this process; want the baseline only", n)
	}
	writeFromProcess(t, path)
	if c := f.next(t); c.ID != "other-process" {
		t.Fatalf("row %+v", c)
	}
	cancel()
	<-f.done
}

// TestWatcherEndsAfterLastFeed: once the last feed stops waiting, the
// commit watcher ends (and lets go of the file watch) about watchLinger
// later, even when nothing is written to wake it.
func TestWatcherEndsAfterLastFeed(t *testing.T) {
	db, err := localdb.Open(filepath.Join(t.TempDir(), "x.db"), &localdb.Options{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(bg)
	f := startFollow(db, ctx, 0, localdb.FollowOptions{Feed: localdb.FeedContinuous})
	testutil.Eventually(t, "a waiting feed starts the watcher", db.Watching)
	time.Sleep(50 * time.Millisecond) // the watcher's first check done, it waits for an event
	cancel()
	<-f.done
	testutil.Eventually(t, "the watcher ends after its last feed", func() bool { return !db.Watching() })
}
