// Package converge is a seeded randomized convergence test: five device
// stores edit, delete and make conflicting edits of the same documents
// while offline, and sync with a hub (our own server, or pouchdb-server) in
// random order and ways, some of the time through a faulty proxy. After a
// final round every store must hold the identical revision forest, the same
// winners and conflict sets, and the same bodies and attachments.
//
// Replay a failing seed with SETTEE_SEED=N (it is printed); SETTEE_SEEDS=N
// runs N seeds per hub (default 8 with our server, 4 with pouchdb-server).
package converge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/reliability/rtest"
	"github.com/settee/settee/server/servertest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

const devices = 5

func TestMain(m *testing.M) {
	code := m.Run()
	fmt.Println("reliability/converge:", rtest.Count.Report())
	os.Exit(code)
}

// seeds returns the seeds to run: SETTEE_SEED alone, or n seeds from a
// time-based start (so CI explores new ones), SETTEE_SEEDS overriding n.
func seeds(t *testing.T, n int) []int64 {
	if s := os.Getenv("SETTEE_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return []int64{v}
	}
	if s := os.Getenv("SETTEE_SEEDS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		n = v
	}
	base := time.Now().UnixNano() % 1e6 * 1000
	out := make([]int64, n)
	for i := range out {
		out[i] = base + int64(i)
	}
	return out
}

func TestConvergeOwnServer(t *testing.T) {
	for _, sd := range seeds(t, 8) {
		t.Run(fmt.Sprintf("seed=%d", sd), func(t *testing.T) {
			t.Parallel()
			hub := servertest.Start(t, nil)
			converge(t, sd, hub.CreateDB(t, "hub"))
		})
	}
}

func TestConvergePouchDB(t *testing.T) {
	pouch := rtest.StartPouch(t)
	for _, sd := range seeds(t, 4) {
		t.Run(fmt.Sprintf("seed=%d", sd), func(t *testing.T) {
			t.Parallel()
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("pouchdb-server output:\n%s", pouch.Output())
				}
			})
			converge(t, sd, pouch.CreateDB(t, fmt.Sprintf("hub-%d", sd)))
		})
	}
}

type device struct {
	db   *localdb.DB
	peer sync.Peer
}

func converge(t *testing.T, sd int64, hubURL string) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("FAILED seed %d: replay with SETTEE_SEED=%d go test ./reliability/converge -run '%s'", sd, sd, t.Name())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rng := rand.New(rand.NewSource(sd))
	fp := rtest.NewFaultProxy(t, hubURL, sd)
	logger := rtest.NewFaultProxy(t, hubURL, sd) // no faults: a request log
	t.Cleanup(func() {
		if t.Failed() {
			reqs := append(logger.Requests(), fp.Requests()...)
			t.Logf("last requests to the hub (without, then with faults):\n%s", strings.Join(reqs[max(0, len(reqs)-400):], "\n"))
		}
	})
	copts := &couch.Options{Timeout: 2 * time.Second, Retries: 2, BackoffBase: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond}
	// Syncs without faults get a generous timeout: a slow machine must not
	// fail them.
	direct, err := couch.New(logger.URL, &couch.Options{Timeout: 30 * time.Second, Retries: 2, BackoffBase: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	faulty, err := couch.New(fp.URL, copts)
	if err != nil {
		t.Fatal(err)
	}
	devs := make([]device, devices)
	for i := range devs {
		db := localdbtest.OpenNamed(t, fmt.Sprintf("dev%d", i), nil)
		devs[i] = device{db: db, peer: localpeer.New(db)}
	}
	ids := make([]string, 12)
	for i := range ids {
		ids[i] = fmt.Sprintf("doc-%02d", i)
	}
	ids = append(ids, "a/b", "sp ace", "ü")

	syncs, failed := 0, 0
	steps := 100
	for step := 0; step < steps; step++ {
		d := devs[rng.Intn(devices)]
		if rng.Intn(5) > 0 {
			edit(ctx, t, rng, d.db, ids[rng.Intn(len(ids))], step)
			continue
		}
		remote := sync.Peer(direct)
		if rng.Intn(3) == 0 {
			remote = faulty
			fp.Set(rtest.Plan{Prob: 0.15, Kinds: []rtest.Kind{rtest.Status, rtest.StatusAfter, rtest.Cut, rtest.Garble}})
		}
		syncs++
		if err := syncOnce(ctx, rng, d.peer, remote); err != nil {
			if remote == direct {
				t.Fatalf("step %d: sync without faults: %v", step, err)
			}
			failed++
		}
		fp.Set(rtest.Plan{})
	}
	// Final rounds without faults: the hub gets everything, then everyone
	// gets everything.
	for round := 0; round < 2; round++ {
		for _, i := range rng.Perm(devices) {
			if err := syncOnce(ctx, rng, devs[i].peer, direct); err != nil {
				t.Fatalf("final round %d, device %d: %v", round, i, err)
			}
		}
	}

	hub := rtest.RemoteSnapshot(ctx, t, hubURL)
	for i, d := range devs {
		s := rtest.LocalSnapshot(ctx, t, d.db)
		if diff := rtest.Diff(hub, s, 10); len(diff) > 0 {
			rtest.Count.Lost.Add(int64(len(diff)))
		}
		rtest.RequireEqual(t, fmt.Sprintf("hub vs device %d", i), hub, s)
	}
	// Same winners and conflict sets everywhere, the hub included.
	// (pouchdb-server 4.2.0 ignores deleted_conflicts=true, so the hub is
	// compared without them; deleted leaves are in the snapshots anyway.)
	want := winners(ctx, t, devs[0].db, ids, true)
	for i := 1; i < devices; i++ {
		if got := winners(ctx, t, devs[i].db, ids, true); got != want {
			t.Fatalf("device %d winners differ:\n%s\nvs device 0:\n%s", i, got, want)
		}
	}
	want = winners(ctx, t, devs[0].db, ids, false)
	if got := hubWinners(ctx, t, hubURL, ids); got != want {
		t.Fatalf("hub winners differ:\n%s\nvs device 0:\n%s", got, want)
	}
	rtest.Count.Seeds.Add(1)
	rtest.Count.Scenarios.Add(1)
	t.Logf("%d docs, %d leaves, %d syncs (%d failed under faults), faults: %s", len(hub), hub.Leaves(), syncs+2*devices, failed, fp.InjectedBy())
}

// syncOnce syncs a device with the hub one of three ways: Sync, push then
// pull, or pull then push.
func syncOnce(ctx context.Context, rng *rand.Rand, local, remote sync.Peer) error {
	o := sync.Options{BatchSize: 1 + rng.Intn(20), Workers: 1 + rng.Intn(3), Retries: 2,
		RetryDelay: 5 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	switch rng.Intn(3) {
	case 0:
		_, err := sync.Sync(ctx, local, remote, o)
		return err
	case 1:
		local, remote = remote, local
		fallthrough
	default:
		for _, p := range [][2]sync.Peer{{local, remote}, {remote, local}} {
			o.Source, o.Target = p[0], p[1]
			if _, err := sync.Replicate(ctx, o); err != nil {
				return err
			}
		}
		return nil
	}
}

// edit makes one random offline change to a document: create or update the
// winner (sometimes with an attachment), delete it, or resolve a conflict by
// deleting a losing leaf.
func edit(ctx context.Context, t *testing.T, rng *rand.Rand, db *localdb.DB, id string, step int) {
	cur, err := db.Get(ctx, id, localdb.GetOptions{Conflicts: true})
	if err != nil && !errors.Is(err, couchdoc.ErrNotFound) {
		t.Fatalf("get %q: %v", id, err)
	}
	switch r := rng.Intn(10); {
	case cur != nil && len(cur.Conflicts) > 0 && r < 3:
		loser := cur.Conflicts[rng.Intn(len(cur.Conflicts))]
		if _, err := db.Delete(ctx, id, loser); err != nil {
			t.Fatalf("resolve %q: delete %s: %v", id, loser, err)
		}
	case cur != nil && r < 4:
		if _, err := db.Delete(ctx, id, cur.Rev); err != nil {
			t.Fatalf("delete %q: %v", id, err)
		}
	default:
		doc := &couchdoc.Doc{ID: id, Body: json.RawMessage(fmt.Sprintf(`{"step":%d,"v":%d}`, step, rng.Intn(1000)))}
		if cur != nil {
			doc.Rev = cur.Rev
			if len(cur.Attachments) > 0 && rng.Intn(2) == 0 {
				doc.Attachments = map[string]*couchdoc.Attachment{}
				for name, a := range cur.Attachments {
					doc.Attachments[name] = &couchdoc.Attachment{Name: name, ContentType: a.ContentType, Digest: a.Digest, Length: a.Length, RevPos: a.RevPos, Stub: true}
				}
			}
		}
		if rng.Intn(6) == 0 {
			if doc.Attachments == nil {
				doc.Attachments = map[string]*couchdoc.Attachment{}
			}
			a := rtest.NewAttachment(rng, 1+rng.Intn(2000), 0)
			a.RevPos = 0
			doc.Attachments[fmt.Sprintf("f%d.bin", rng.Intn(3))] = a
		}
		if _, err := db.Put(ctx, doc); err != nil {
			t.Fatalf("put %q on %q: %v", id, doc.Rev, err)
		}
	}
}

// winners lists, per id, the winner and its sorted conflicts and deleted
// conflicts as a device sees them.
func winners(ctx context.Context, t *testing.T, db *localdb.DB, ids []string, withDeleted bool) string {
	var b strings.Builder
	for _, id := range ids {
		d, err := db.Get(ctx, id, localdb.GetOptions{Conflicts: true, DeletedConflicts: true})
		if errors.Is(err, couchdoc.ErrNotFound) {
			fmt.Fprintf(&b, "%s: none\n", id)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if withDeleted {
			fmt.Fprintf(&b, "%s: %s c=%v d=%v\n", id, d.Rev, sorted(d.Conflicts), sorted(d.DeletedConflicts))
		} else {
			fmt.Fprintf(&b, "%s: %s c=%v\n", id, d.Rev, sorted(d.Conflicts))
		}
	}
	return b.String()
}

func hubWinners(ctx context.Context, t *testing.T, hubURL string, ids []string) string {
	var b strings.Builder
	for _, id := range ids {
		var d struct {
			Rev       string   `json:"_rev"`
			Conflicts []string `json:"_conflicts"`
		}
		st := testutil.DoJSON(ctx, t, "GET", hubURL+"/"+rtest.EscapeID(id)+"?conflicts=true", nil, &d)
		switch st {
		case 404:
			fmt.Fprintf(&b, "%s: none\n", id)
		case 200:
			fmt.Fprintf(&b, "%s: %s c=%v\n", id, d.Rev, sorted(d.Conflicts))
		default:
			t.Fatalf("hub get %q: status %d", id, st)
		}
	}
	return b.String()
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
