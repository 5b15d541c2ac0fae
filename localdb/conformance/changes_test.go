package conformance_test

import (
	"fmt"

	"github.com/settee/settee/localdb"
)

// compareChanges checks both sides' changes feeds, main_only and
// all_docs: each existing document once, seqs increasing, the winner
// (first with all_docs, as CouchDB's doc_info lists it) and the leaves, the
// deleted flag, and the order: a document comes after every document whose
// last change was written by an earlier write call.
func (h *harness) compareChanges() {
	h.t.Helper()
	byID := map[string]*docModel{}
	nExist := 0
	for _, m := range h.docs {
		byID[m.id] = m
		if m.exists() {
			nExist++
		}
	}
	for _, all := range []bool{false, true} {
		var rows []localdb.Change
		last, err := h.db.Changes(h.ctx, localdb.ChangesOptions{AllDocs: all}, func(c *localdb.Change) error {
			rows = append(rows, *c)
			return nil
		})
		if err != nil {
			h.fail(nil, "localdb Changes(all_docs=%v): %v", all, err)
		}
		if len(rows) != nExist {
			h.fail(nil, "localdb Changes(all_docs=%v): %d rows, want %d (one per document)", all, len(rows), nExist)
		}
		seen := map[string]bool{}
		var prevSeq int64
		prevEpoch := 0
		for _, r := range rows {
			m := byID[r.ID]
			if m == nil || !m.exists() || seen[r.ID] {
				h.fail(m, "localdb Changes(all_docs=%v): unexpected or repeated row for %q", all, r.ID)
			}
			seen[r.ID] = true
			if r.Seq <= prevSeq {
				h.fail(m, "localdb Changes: seq %d after %d", r.Seq, prevSeq)
			}
			prevSeq = r.Seq
			h.checkChangeRow(m, "localdb Changes", all, r.Revs, r.Deleted, true)
			if m.localEpoch < prevEpoch {
				h.fail(m, "localdb Changes: %q (last changed by write %d) comes after a doc last changed by write %d; each doc must appear at its latest seq", r.ID, m.localEpoch, prevEpoch)
			}
			prevEpoch = m.localEpoch
		}
		if last != prevSeq {
			h.soft("changes-last-seq", nil, "localdb Changes returned last seq %d, the last row has %d", last, prevSeq)
		}

		prows, err := h.pc.changes(h.ctx, all)
		if err != nil {
			h.fail(nil, "pouchdb-server: %v", err)
		}
		seen = map[string]bool{}
		prevSeq, prevEpoch = 0, 0
		for _, r := range prows {
			m := byID[r.ID]
			if m == nil || seen[r.ID] || r.Seq <= prevSeq {
				h.fail(m, "pouchdb-server _changes: unexpected row %+v", r)
			}
			seen[r.ID] = true
			prevSeq = r.Seq
			if m.tainted {
				continue
			}
			var revs []string
			for _, c := range r.Changes {
				revs = append(revs, c.Rev)
			}
			// pouchdb-server lists style=all_docs leaves in its own order,
			// so only the set is compared there.
			h.checkChangeRow(m, "pouchdb-server _changes", all, revs, r.Deleted, !all)
			if m.pouchEpoch < prevEpoch {
				h.fail(m, "pouchdb-server _changes: %q out of order", r.ID)
			}
			prevEpoch = m.pouchEpoch
		}
		for _, m := range h.docs {
			if m.exists() && !m.tainted && !seen[m.id] {
				h.fail(m, "pouchdb-server _changes: no row")
			}
		}
	}
}

func (h *harness) checkChangeRow(m *docModel, what string, all bool, revs []string, deleted bool, winnerFirst bool) {
	h.t.Helper()
	leaves := m.leaves()
	w := leaves[0]
	if deleted != w.deleted {
		h.fail(m, "%s: deleted=%v, want %v", what, deleted, w.deleted)
	}
	if !all {
		if len(revs) != 1 || revs[0] != w.rev {
			h.fail(m, "%s: revs %v, want the winner %s", what, revs, w.rev)
		}
		return
	}
	if join(sortedCopy(revs)) != join(sortedCopy(revStrings(leaves))) {
		h.fail(m, "%s style=all_docs: revs %v, want the leaves %v", what, revs, revStrings(leaves))
	}
	if winnerFirst && revs[0] != w.rev {
		h.fail(m, "%s style=all_docs: revs %v, want the winner %s first", what, revs, w.rev)
	}
}

// compareChangesSince checks the incremental feed: since the last seq seen
// at the previous comparison, localdb lists exactly the documents changed
// by later writes (a write that changes nothing, such as a revision sent
// again, makes no new seq in CouchDB), each once; the same holds for
// pouchdb-server's feed, read whole and cut at its previous last seq.
func (h *harness) compareChangesSince() {
	h.t.Helper()
	want := map[string]bool{}
	for _, m := range h.docs {
		if m.localEpoch > h.sinceEpoch {
			want[m.id] = true
		}
	}
	got := map[string]bool{}
	last, err := h.db.Changes(h.ctx, localdb.ChangesOptions{Since: h.sinceSeq}, func(c *localdb.Change) error {
		if got[c.ID] || c.Seq <= h.sinceSeq {
			return fmt.Errorf("row %+v repeated or not after since=%d", *c, h.sinceSeq)
		}
		got[c.ID] = true
		return nil
	})
	if err != nil {
		h.fail(nil, "localdb Changes(since=%d): %v", h.sinceSeq, err)
	}
	if g, w := sortedKeys(got), sortedKeys(want); join(g) != join(w) {
		h.fail(nil, "localdb Changes(since=%d) lists %v; the docs changed since are %v", h.sinceSeq, g, w)
	}
	if last > h.sinceSeq {
		h.sinceSeq = last
	}
	h.sinceEpoch = h.localWrites

	prows, err := h.pc.changes(h.ctx, false)
	if err != nil {
		h.fail(nil, "pouchdb-server: %v", err)
	}
	got, want = map[string]bool{}, map[string]bool{}
	tainted := map[string]bool{}
	for _, m := range h.docs {
		tainted[m.id] = m.tainted
		if m.pouchEpoch > h.pouchSinceEpoch && !m.tainted {
			want[m.id] = true
		}
	}
	var plast int64
	for _, r := range prows {
		plast = max(plast, r.Seq)
		if r.Seq > h.pouchSinceSeq && !tainted[r.ID] {
			got[r.ID] = true
		}
	}
	if g, w := sortedKeys(got), sortedKeys(want); join(g) != join(w) {
		h.fail(nil, "pouchdb-server _changes since %d lists %v; the docs changed since are %v", h.pouchSinceSeq, g, w)
	}
	h.pouchSinceSeq, h.pouchSinceEpoch = plast, h.pouchWrites
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return sortedCopy(out)
}

// compareChangesOptions checks the feed's options against the full feed:
// descending is the reverse, a limit keeps a prefix, doc_ids keeps those
// rows in order, and include_docs with conflicts gives each row its
// winning revision (a tombstone for a deleted document) and _conflicts.
func (h *harness) compareChangesOptions() {
	h.t.Helper()
	read := func(opts localdb.ChangesOptions) []localdb.Change {
		var rows []localdb.Change
		if _, err := h.db.Changes(h.ctx, opts, func(c *localdb.Change) error {
			rows = append(rows, *c)
			return nil
		}); err != nil {
			h.fail(nil, "localdb Changes(%+v): %v", opts, err)
		}
		return rows
	}
	ids := func(rows []localdb.Change) []string {
		var out []string
		for _, r := range rows {
			out = append(out, fmt.Sprintf("%s@%d", r.ID, r.Seq))
		}
		return out
	}
	full := read(localdb.ChangesOptions{IncludeDocs: true, Conflicts: true})
	if len(full) == 0 {
		return
	}
	var rev []localdb.Change
	for i := len(full) - 1; i >= 0; i-- {
		rev = append(rev, full[i])
	}
	if got := read(localdb.ChangesOptions{Descending: true}); join(ids(got)) != join(ids(rev)) {
		h.fail(nil, "localdb Changes(descending): %v, want %v", ids(got), ids(rev))
	}
	n := 1 + h.rng.Intn(len(full))
	if got := read(localdb.ChangesOptions{Limit: n}); join(ids(got)) != join(ids(full[:n])) {
		h.fail(nil, "localdb Changes(limit=%d): %v, want %v", n, ids(got), ids(full[:n]))
	}
	pickIDs := map[string]bool{"never-there": true}
	var want []localdb.Change
	for _, r := range full {
		if h.rng.Intn(3) == 0 {
			pickIDs[r.ID] = true
			want = append(want, r)
		}
	}
	if got := read(localdb.ChangesOptions{DocIDs: sortedKeys(pickIDs)}); join(ids(got)) != join(ids(want)) {
		h.fail(nil, "localdb Changes(doc_ids=%v): %v, want %v", sortedKeys(pickIDs), ids(got), ids(want))
	}
	for _, r := range full {
		m := h.doc(r.ID)
		w := m.winner()
		if r.Doc == nil {
			h.fail(m, "localdb Changes(include_docs): no doc in row %+v", r)
		}
		h.checkDoc(m, "localdb Changes(include_docs)", r.Doc, w, false)
		var wantC []string
		for _, l := range m.leaves()[1:] {
			if !l.deleted && !w.deleted {
				wantC = append(wantC, l.rev)
			}
		}
		if join(sortedCopy(r.Doc.Conflicts)) != join(sortedCopy(wantC)) {
			h.fail(m, "localdb Changes(include_docs, conflicts): _conflicts %v, want %v", r.Doc.Conflicts, wantC)
		}
	}
}
