package conformance_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// compare sends every pending write and checks both sides against the
// model: each document, _revs_diff and the changes feed. pouchdb-server's
// view of a document is read again only when it changed since the last
// comparison (or when final), to keep the run short.
func (h *harness) compare(final bool) {
	h.t.Helper()
	h.stats.compares++
	h.flushLocal()
	h.flushPouch()
	if h.stats.compares%2 == 0 {
		// Compaction drops non-leaf bodies and unreferenced attachment
		// content; nothing compared here may change.
		if err := h.db.Compact(h.ctx); err != nil {
			h.fail(nil, "localdb Compact: %v", err)
		}
	}
	if err := h.db.CheckInvariants(h.ctx); err != nil {
		h.fail(nil, "localdb CheckInvariants: %v", err)
	}
	for _, m := range h.docs {
		h.compareDoc(m, final || m.pouchEpoch > m.pouchChecked)
		m.pouchChecked = m.pouchEpoch
	}
	h.compareRevsDiff()
	h.compareChanges()
	h.compareChangesSince()
	h.compareChangesOptions()
	h.compareAllDocs()
}

// checkDoc compares one revision as a side returned it with the model.
//
// Attachment revpos is checked for localdb only: CouchDB keeps the revpos a
// replicated revision brings (couch_att inline_from_json), pouchdb-server
// replaces it with the revision's generation.
func (h *harness) checkDoc(m *docModel, what string, got *couchdoc.Doc, want *revNode, withRevs bool) {
	h.t.Helper()
	if got == nil {
		h.fail(m, "%s: no document, want %s", what, want.rev)
	}
	if got.Rev != want.rev || got.Deleted != want.deleted {
		h.fail(m, "%s: rev %s deleted=%v, want %s deleted=%v", what, got.Rev, got.Deleted, want.rev, want.deleted)
	}
	if b, err := couchdoc.CanonicalBody(got.Body); err != nil || !bytes.Equal(b, want.body) {
		h.fail(m, "%s: rev %s body %s (%v), want %s", what, got.Rev, got.Body, err, want.body)
	}
	if withRevs {
		if w := m.revisions(want.rev); !sameRevisions(got.Revisions, w) {
			h.fail(m, "%s: rev %s _revisions %+v, want %+v", what, got.Rev, got.Revisions, w)
		}
	}
	if len(got.Attachments) != len(want.atts) {
		h.fail(m, "%s: rev %s has %d attachments, want %d", what, got.Rev, len(got.Attachments), len(want.atts))
	}
	for name, wa := range want.atts {
		ga := got.Attachments[name]
		revposOK := ga != nil && (ga.RevPos == wa.revpos || strings.HasPrefix(what, "pouchdb-server"))
		if ga == nil || !ga.Stub || ga.ContentType != wa.ctype || ga.Digest != wa.digest || ga.Length != int64(len(wa.data)) || !revposOK {
			h.fail(m, "%s: rev %s attachment %q is %+v, want a stub of %s, %s, length %d, revpos %d", what, got.Rev, name, ga, wa.ctype, wa.digest, len(wa.data), wa.revpos)
		}
	}
}

// checkAttBytes reads every attachment of a leaf from both sides.
func (h *harness) checkAttBytes(m *docModel, leaf *revNode, askPouch bool) {
	h.t.Helper()
	for name, wa := range leaf.atts {
		h.stats.attReads++
		a, rc, err := h.db.OpenAttachment(h.ctx, m.id, leaf.rev, name)
		if err != nil {
			h.fail(m, "localdb OpenAttachment(%s, %q): %v", leaf.rev, name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(b, wa.data) || a.Digest != wa.digest {
			h.fail(m, "localdb OpenAttachment(%s, %q): %d bytes (%v), digest %s; want %d bytes, %s", leaf.rev, name, len(b), err, a.Digest, len(wa.data), wa.digest)
		}
		if askPouch {
			pb, err := h.pc.attachment(h.ctx, m.id, name, leaf.rev)
			if err != nil || !bytes.Equal(pb, wa.data) {
				h.fail(m, "pouchdb-server attachment %s %q: %d bytes, %v; want %d bytes", leaf.rev, name, len(pb), err, len(wa.data))
			}
		}
	}
}

func notFoundReason(err error) (string, bool) {
	var e *couchdoc.Error
	if !errors.Is(err, couchdoc.ErrNotFound) || !errors.As(err, &e) {
		return "", false
	}
	return e.Reason, true
}

// compareDoc checks one document on both sides: the winner with
// _conflicts and _deleted_conflicts, open_revs=all with histories, and
// reads of given revisions.
func (h *harness) compareDoc(m *docModel, askPouch bool) {
	h.t.Helper()
	leaves := m.leaves()
	w := m.winner()
	got, err := h.db.Get(h.ctx, m.id, localdb.GetOptions{Conflicts: true, DeletedConflicts: true})
	switch {
	case w == nil || w.deleted:
		want := "missing"
		if w != nil {
			want = "deleted"
		}
		reason, ok := notFoundReason(err)
		if !ok {
			h.fail(m, "localdb Get: %v, %v; want not_found (%s)", got, err, want)
		}
		if reason != want {
			h.soft("get-reason-"+want, m, "localdb Get of a %s document: reason %q, CouchDB says %q", want, reason, want)
		}
	default:
		if err != nil {
			h.fail(m, "localdb Get: %v; want %s", err, w.rev)
		}
		h.checkDoc(m, "localdb Get (winner)", got, w, false)
		var wantC, wantDC []string
		for _, l := range leaves[1:] {
			if l.deleted {
				wantDC = append(wantDC, l.rev)
			} else {
				wantC = append(wantC, l.rev)
			}
		}
		if join(sortedCopy(got.Conflicts)) != join(sortedCopy(wantC)) || join(sortedCopy(got.DeletedConflicts)) != join(sortedCopy(wantDC)) {
			h.fail(m, "localdb Get: _conflicts %v _deleted_conflicts %v, want %v and %v", got.Conflicts, got.DeletedConflicts, wantC, wantDC)
		}
		// CouchDB lists both in its doc_info order: generation, then hash,
		// descending.
		if join(got.Conflicts) != join(wantC) || join(got.DeletedConflicts) != join(wantDC) {
			h.soft("conflicts-order", m, "localdb Get: _conflicts %v _deleted_conflicts %v, CouchDB orders them %v and %v", got.Conflicts, got.DeletedConflicts, wantC, wantDC)
		}
	}
	askPouch = askPouch && !m.tainted
	if w == nil {
		if askPouch {
			if _, st, err := h.pc.get(h.ctx, m.id, ""); err != nil || st != http.StatusNotFound {
				h.fail(m, "pouchdb-server GET of a missing doc: %d %v", st, err)
			}
		}
		return
	}

	// open_revs=all with revs=true, on both sides.
	ors, err := h.db.OpenRevs(h.ctx, m.id, nil, localdb.GetOptions{Revs: true})
	if err != nil {
		h.fail(m, "localdb OpenRevs(all): %v", err)
	}
	var docs []*couchdoc.Doc
	for _, o := range ors {
		if o.Doc == nil {
			h.fail(m, "localdb OpenRevs(all): a missing entry %q", o.Missing)
		}
		docs = append(docs, o.Doc)
	}
	h.checkLeaves(m, "localdb OpenRevs(all)", docs, leaves)
	if askPouch {
		pdocs, err := h.pc.openRevsAll(h.ctx, m.id)
		if err != nil {
			h.fail(m, "pouchdb-server: %v", err)
		}
		h.checkLeaves(m, "pouchdb-server open_revs=all", pdocs, leaves)
		pw, st, err := h.pc.get(h.ctx, m.id, "")
		switch {
		case err != nil:
			h.fail(m, "pouchdb-server GET: %v", err)
		case w.deleted && st != http.StatusNotFound:
			h.fail(m, "pouchdb-server GET of a deleted doc: status %d", st)
		case !w.deleted:
			if st != http.StatusOK || pw.Rev != w.rev {
				h.fail(m, "pouchdb-server GET: status %d rev %v, want %s", st, pw, w.rev)
			}
			// pouchdb-server ignores deleted_conflicts=true, so only
			// _conflicts is compared on its side.
			var wantC []string
			for _, l := range leaves[1:] {
				if !l.deleted {
					wantC = append(wantC, l.rev)
				}
			}
			if join(sortedCopy(pw.Conflicts)) != join(sortedCopy(wantC)) {
				h.fail(m, "pouchdb-server GET: _conflicts %v, want %v", pw.Conflicts, wantC)
			}
		}
	}

	// Given revisions: a leaf, an unknown rev (and, when there is one, a
	// revision the peers were never sent) come back in request order.
	leaf := pick(h, leaves)
	unknown := couchdoc.FormatRev(1+h.rng.Intn(8), h.randHash())
	req := []string{leaf.rev, unknown}
	if u := m.unsentRevs(); len(u) > 0 {
		req = append(req, pick(h, u))
	}
	ors, err = h.db.OpenRevs(h.ctx, m.id, req, localdb.GetOptions{Revs: true})
	if err != nil {
		h.fail(m, "localdb OpenRevs(%v): %v", req, err)
	}
	if len(ors) != len(req) {
		h.fail(m, "localdb OpenRevs(%v): %d answers", req, len(ors))
	}
	for i, o := range ors {
		if i == 0 {
			h.checkDoc(m, "localdb OpenRevs([leaf, ...])", o.Doc, leaf, true)
		} else if o.Doc != nil || o.Missing != req[i] {
			h.fail(m, "localdb OpenRevs(%v): answer %d is %+v, want missing %s", req, i, o, req[i])
		}
	}
	h.checkAttBytes(m, leaf, askPouch)
	g, err := h.db.Get(h.ctx, m.id, localdb.GetOptions{Rev: leaf.rev, Revs: true})
	if err != nil {
		h.fail(m, "localdb Get(rev=%s): %v", leaf.rev, err)
	}
	h.checkDoc(m, "localdb Get(rev=leaf, revs=true)", g, leaf, true)
	if _, err := h.db.Get(h.ctx, m.id, localdb.GetOptions{Rev: unknown}); !errors.Is(err, couchdoc.ErrNotFound) {
		h.fail(m, "localdb Get(rev=%s) of an unknown rev: %v, want not_found", unknown, err)
	}
}

// checkLeaves compares an open_revs=all answer with the model's leaves.
func (h *harness) checkLeaves(m *docModel, what string, docs []*couchdoc.Doc, leaves []*revNode) {
	h.t.Helper()
	byRev := map[string]*couchdoc.Doc{}
	var got []string
	for _, d := range docs {
		byRev[d.Rev] = d
		got = append(got, d.Rev)
	}
	if len(byRev) != len(docs) || join(sortedCopy(got)) != join(sortedCopy(revStrings(leaves))) {
		h.fail(m, "%s: leaves %v, want %v", what, got, revStrings(leaves))
	}
	for _, l := range leaves {
		h.checkDoc(m, what, byRev[l.rev], l, true)
	}
}

// compareRevsDiff asks both sides about random revisions of every
// document (leaves, ancestors, revisions known only by id, revisions never
// sent, made-up ones) and of documents that do not exist.
func (h *harness) compareRevsDiff() {
	h.t.Helper()
	q := map[string][]string{}
	byID := map[string]*docModel{}
	for _, m := range h.docs {
		byID[m.id] = m
		seen := map[string]bool{}
		var revs []string
		for k := h.rng.Intn(6); k > 0; k-- {
			var r string
			switch x := h.rng.Intn(4); {
			case x == 0 && len(m.known) > 0:
				r = pick(h, m.knownRevs())
			case x == 1 && len(m.universe) > 0:
				r = pick(h, m.universeRevs())
			default:
				r = couchdoc.FormatRev(1+h.rng.Intn(12), h.randHash())
			}
			if !seen[r] {
				seen[r] = true
				revs = append(revs, r)
			}
		}
		if len(revs) > 0 {
			q[m.id] = revs
		}
	}
	for i := 0; i < 2; i++ {
		id := "never-" + h.randHash()[:8]
		byID[id] = newDocModel(id)
		q[id] = []string{couchdoc.FormatRev(1+i, h.randHash())}
	}
	got, err := h.db.RevsDiff(h.ctx, q)
	if err != nil {
		h.fail(nil, "localdb RevsDiff: %v", err)
	}
	pq := map[string][]string{}
	for id, revs := range q {
		m := byID[id]
		want := m.revsDiff(revs)
		g, ok := got[id]
		switch {
		case want == nil && ok:
			h.fail(m, "localdb RevsDiff(%v): %+v, want nothing missing", revs, g)
		case want != nil && !ok:
			h.fail(m, "localdb RevsDiff(%v): no entry, want %+v", revs, *want)
		case want != nil:
			if join(sortedCopy(g.Missing)) != join(sortedCopy(want.Missing)) || join(sortedCopy(g.PossibleAncestors)) != join(sortedCopy(want.PossibleAncestors)) {
				h.fail(m, "localdb RevsDiff(%v): %+v, want %+v", revs, g, *want)
			}
		}
		if !m.tainted {
			pq[id] = revs
		}
	}
	pgot, err := h.pc.revsDiff(h.ctx, pq)
	if err != nil {
		h.fail(nil, "pouchdb-server: %v", err)
	}
	for id, revs := range pq {
		m := byID[id]
		want := m.pouchRevsDiff(revs)
		if join(sortedCopy(pgot[id].Missing)) != join(sortedCopy(want)) {
			h.fail(m, "pouchdb-server _revs_diff(%v): %+v, want missing %v", revs, pgot[id], want)
		}
	}
}
