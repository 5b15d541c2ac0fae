package conformance_test

import (
	"fmt"

	"github.com/settee/settee/localdb"
)

// compareAllDocs checks _all_docs (live documents in id order with their
// winners, total_rows; with keys, deleted documents with their winning
// tombstone and missing ones as not_found) and the ids of conflicted
// documents, on localdb and (without keys) on pouchdb-server.
func (h *harness) compareAllDocs() {
	h.t.Helper()
	var live, conflicted []string
	winners := map[string]*revNode{}
	for _, m := range h.docs {
		w := m.winner()
		winners[m.id] = w
		if w == nil || w.deleted {
			continue
		}
		live = append(live, m.id)
		for _, l := range m.leaves()[1:] {
			if !l.deleted {
				conflicted = append(conflicted, m.id)
				break
			}
		}
	}
	live, conflicted = sortedCopy(live), sortedCopy(conflicted)
	var ids []string
	total, err := h.db.AllDocs(h.ctx, localdb.AllDocsOptions{}, func(r *localdb.AllDocsRow) error {
		ids = append(ids, r.ID)
		if w := winners[r.ID]; w == nil || r.Rev != w.rev || r.Deleted {
			return fmt.Errorf("row %+v, want the live winner %v", *r, w)
		}
		return nil
	})
	if err != nil || join(ids) != join(live) || total != int64(len(live)) {
		h.fail(nil, "localdb AllDocs: %v, ids %v total %d; want %v", err, ids, total, live)
	}
	keys := append([]string{"never-" + h.randHash()[:6]}, h.docIDs()...)
	h.rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	var got []string
	_, err = h.db.AllDocs(h.ctx, localdb.AllDocsOptions{Keys: keys}, func(r *localdb.AllDocsRow) error {
		got = append(got, r.ID)
		w := winners[r.ID]
		switch {
		case w == nil && r.Error != "not_found":
			return fmt.Errorf("row %+v for a missing doc, want error not_found", *r)
		case w != nil && (r.Error != "" || r.Rev != w.rev || r.Deleted != w.deleted):
			return fmt.Errorf("row %+v, want rev %s deleted=%v", *r, w.rev, w.deleted)
		}
		return nil
	})
	if err != nil || join(got) != join(keys) {
		h.fail(nil, "localdb AllDocs(keys=%v): %v, rows %v", keys, err, got)
	}
	var cids []string
	if err := h.db.Conflicts(h.ctx, func(id string) error { cids = append(cids, id); return nil }); err != nil || join(cids) != join(conflicted) {
		h.fail(nil, "localdb Conflicts: %v %v, want %v", err, cids, conflicted)
	}

	ptotal, prows, err := h.pc.allDocs(h.ctx)
	if err != nil {
		h.fail(nil, "pouchdb-server: %v", err)
	}
	var pids, plive []string
	for _, r := range prows {
		if m := h.doc(r.ID); m == nil || m.tainted {
			continue
		}
		pids = append(pids, r.ID)
		if w := winners[r.ID]; w == nil || w.deleted || r.Value.Rev != w.rev {
			h.fail(h.doc(r.ID), "pouchdb-server _all_docs row %+v, want the live winner %v", r, w)
		}
	}
	for _, id := range live {
		if !h.doc(id).tainted {
			plive = append(plive, id)
		}
	}
	if join(pids) != join(plive) || ptotal != int64(len(live)) && h.tainted() == 0 {
		h.fail(nil, "pouchdb-server _all_docs: ids %v total_rows %d, want %v (%d)", pids, ptotal, plive, len(live))
	}
}

func (h *harness) docIDs() []string {
	var out []string
	for _, m := range h.docs {
		out = append(out, m.id)
	}
	return out
}

func (h *harness) doc(id string) *docModel {
	for _, m := range h.docs {
		if m.id == id {
			return m
		}
	}
	return nil
}
