package conformance_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testpeer"
)

var (
	seedFlag = flag.Int64("seed", 0, "replay TestDifferential with this one seed (or SETTEE_CONFORMANCE_SEED)")
	opsFlag  = flag.Int("ops", 0, "operations per seed in TestDifferential (or SETTEE_CONFORMANCE_OPS)")
)

// defaultOps is the number of operations per seed; with the fixed seeds
// plus one fresh seed per run that is a few thousand operations.
const defaultOps = 800

// TestDifferential applies the same random operations to localdb and to
// pouchdb-server and asserts they agree (see the package comment).
//
// How local edits are compared: a new_edits=true write makes a revision
// whose hash each implementation computes its own way, so the two trees
// would drift apart at the first edit. Instead localdb makes the edit and
// the test feeds the revision localdb produced to pouchdb-server with
// new_edits=false and the same history, after checking its structure
// against CouchDB's rule (generation, parent, history). Whether an edit is
// accepted at all is decided by CouchDB's rule (the model's editOutcome),
// and pouchdb-server is asked too wherever it follows CouchDB: refused
// edits are sent to both (409 on both sides; a refused write changes
// nothing), and about a third of accepted edits are "mirrored": sent to
// pouchdb-server with new_edits=true as well, and each side then receives
// the other's revision with new_edits=false, so both trees gain the same
// two sibling revisions and pouchdb-server's own choice of parent is
// checked against localdb's.
func TestDifferential(t *testing.T) {
	seeds := []int64{1, 2, 3, time.Now().UnixNano()%1_000_000_000 + 1}
	if s := envOrFlag(*seedFlag, "SETTEE_CONFORMANCE_SEED"); s != 0 {
		seeds = []int64{s}
	}
	ops := int(envOrFlag(int64(*opsFlag), "SETTEE_CONFORMANCE_OPS"))
	if ops == 0 {
		ops = defaultOps
		if testing.Short() {
			ops = 200
			if len(seeds) > 2 {
				seeds = seeds[len(seeds)-2:]
			}
		}
	}
	srv := testpeer.PouchDB(t)
	total := 0
	for i, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			dbURL := srv.CreateDB(t, fmt.Sprintf("diff%d", i))
			h := newHarness(t, seed, openStore(t), newPouch(dbURL))
			h.run(ops)
			total += h.op
			t.Logf("seed %d: %d ops (%d replicated docs, %d local edits of which %d refused and %d mirrored), %d comparisons (%d attachment reads), %d of %d docs tainted, %d localdb writes, %d pouchdb-server requests",
				seed, h.op, h.stats.replicated, h.stats.edits, h.stats.refused, h.stats.mirrored, h.stats.compares, h.stats.attReads, h.tainted(), len(h.docs), h.localWrites, h.pc.requests)
		})
	}
	t.Logf("%d operations over %d seeds", total, len(seeds))
}

func envOrFlag(v int64, env string) int64 {
	if v != 0 {
		return v
	}
	if s := os.Getenv(env); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err == nil {
			return n
		}
	}
	return 0
}

// harness holds one seed's run: the store, the peer, the model and the
// writes not yet sent to each side.
type harness struct {
	t    testing.TB
	ctx  context.Context
	seed int64
	rng  *rand.Rand
	db   store
	pc   *pouch
	docs []*docModel
	op   int

	// Replicated writes are batched per side, in model order.
	pendLocal, pendPouch     []pending
	batch                    int
	localWrites, pouchWrites int
	softErrs                 map[string]bool
	// The changes feed's positions at the last comparison, per side.
	sinceSeq, pouchSinceSeq     int64
	sinceEpoch, pouchSinceEpoch int

	stats struct{ replicated, edits, refused, mirrored, compares, attReads int }
}

type pending struct {
	doc     *couchdoc.Doc
	m       *docModel
	changed bool
}

func newHarness(t testing.TB, seed int64, db store, pc *pouch) *harness {
	h := &harness{t: t, ctx: context.Background(), seed: seed, rng: rand.New(rand.NewSource(seed)), db: db, pc: pc, batch: 4, softErrs: map[string]bool{}}
	ids := []string{"dóc ü", "doc+plus", "doc/slash"}
	for i := 0; len(ids) < 24; i++ {
		ids = append(ids, fmt.Sprintf("doc-%02d", i))
	}
	for i, id := range ids {
		m := newDocModel(id)
		m.chaos = i%4 == 3
		h.docs = append(h.docs, m)
	}
	return h
}

func (h *harness) tainted() int {
	n := 0
	for _, m := range h.docs {
		if m.tainted {
			n++
		}
	}
	return n
}

// fail stops the run with everything needed to replay it.
func (h *harness) fail(m *docModel, format string, args ...any) {
	h.t.Helper()
	msg := fmt.Sprintf(format, args...)
	var b strings.Builder
	if m != nil {
		fmt.Fprintf(&b, "\ndoc %q (chaos=%v tainted=%v), its operations:\n", m.id, m.chaos, m.tainted)
		log := m.log
		if len(log) > 60 {
			log = log[len(log)-60:]
			b.WriteString("  ...\n")
		}
		for _, l := range log {
			b.WriteString("  " + l + "\n")
		}
		if w := m.winner(); w != nil {
			fmt.Fprintf(&b, "model leaves: %v\n", revStrings(m.leaves()))
		}
	}
	h.t.Fatalf("seed %d, op %d: %s%s\nreplay: go test ./localdb/conformance -run TestDifferential -seed %d", h.seed, h.op, msg, b.String(), h.seed)
}

// soft records a finding once per kind and lets the run go on, for
// deviations (such as ordering) that do not make later checks meaningless.
func (h *harness) soft(kind string, m *docModel, format string, args ...any) {
	h.t.Helper()
	if h.softErrs[kind] {
		return
	}
	h.softErrs[kind] = true
	id := ""
	if m != nil {
		id = m.id
	}
	h.t.Errorf("seed %d, op %d, doc %q: %s (reported once per run)", h.seed, h.op, id, fmt.Sprintf(format, args...))
}

func (h *harness) run(ops int) {
	for h.op < ops {
		h.op++
		m := h.docs[h.rng.Intn(len(h.docs))]
		if h.rng.Float64() < 0.55 {
			h.replicate(m)
		} else {
			h.localEdit(m)
		}
		if len(h.pendLocal) >= h.batch {
			h.flushLocal()
		}
		if len(h.pendPouch) >= 40 {
			h.flushPouch()
		}
		if h.op%200 == 0 {
			h.compare(false)
		}
	}
	h.compare(true)
}

// pendingDocs are the documents of pending writes, in order.
func pendingDocs(pend []pending) []*couchdoc.Doc {
	docs := make([]*couchdoc.Doc, len(pend))
	for i, p := range pend {
		docs[i] = p.doc
	}
	return docs
}

// flushLocal sends the pending replicated writes to localdb in one
// BulkDocs(new_edits=false).
func (h *harness) flushLocal() {
	h.t.Helper()
	if len(h.pendLocal) == 0 {
		return
	}
	docs := pendingDocs(h.pendLocal)
	res, err := h.db.BulkDocs(h.ctx, docs, false)
	if err != nil {
		h.fail(h.pendLocal[0].m, "localdb BulkDocs(new_edits=false) of %d docs: %v", len(docs), err)
	}
	for i, r := range res {
		if r.Error != "" {
			var m *docModel
			if i < len(h.pendLocal) {
				m = h.pendLocal[i].m
			}
			h.fail(m, "localdb BulkDocs(new_edits=false) result %d: %s: %s", i, r.Error, r.Reason)
		}
	}
	if len(res) != len(docs) {
		h.soft("bulkdocs-results", h.pendLocal[0].m, "BulkDocs(new_edits=false) returned %d results for %d docs; the contract is one per doc in input order", len(res), len(docs))
	}
	h.localWrites++
	for _, p := range h.pendLocal {
		if p.changed {
			p.m.localEpoch = h.localWrites
		}
	}
	h.pendLocal = nil
	h.batch = 1 + h.rng.Intn(8)
}

// flushPouch sends the pending replicated writes to pouchdb-server in one
// _bulk_docs new_edits=false.
func (h *harness) flushPouch() {
	h.t.Helper()
	if len(h.pendPouch) == 0 {
		return
	}
	docs := pendingDocs(h.pendPouch)
	if err := h.pc.bulkDocs(h.ctx, docs, false); err != nil {
		h.fail(nil, "pouchdb-server: %v", err)
	}
	h.pouchWrites++
	for _, p := range h.pendPouch {
		if p.changed {
			p.m.pouchEpoch = h.pouchWrites
		}
	}
	h.pendPouch = nil
}

// replicatedDoc is the new_edits=false document for a universe revision
// with the given history (newest first).
func replicatedDoc(m *docModel, path []string) *couchdoc.Doc {
	n := m.universe[path[0]]
	r := &couchdoc.Revisions{Start: n.gen}
	for _, p := range path {
		r.IDs = append(r.IDs, m.universe[p].hash)
	}
	d := &couchdoc.Doc{ID: m.id, Rev: n.rev, Deleted: n.deleted, Body: n.body, Revisions: r}
	// Attachments travel inline with their revpos, as a replicator sends
	// them when the target has none of the revision's ancestors.
	for name, a := range n.atts {
		d.Attachments = setAtt(d.Attachments, &couchdoc.Attachment{Name: name, ContentType: a.ctype, Data: a.data, RevPos: a.revpos})
	}
	return d
}
