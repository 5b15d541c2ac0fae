package conformance_test

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/settee/settee/couchdoc"
)

// The model is what CouchDB's couch_key_tree makes of a document's history,
// in the form that is easy to get right: every revision the generator ever
// made lives in a "universe" where it has exactly one parent (as real
// revision ids, which hash their parent, do). A peer knows some of those
// revisions and some of the parent links (the ones a _revisions history
// carried). CouchDB's revision forest is then exactly the known revisions
// joined by the known links (see pathEffect). With no stemming (histories
// here stay far below revs_limit) nothing else changes the shape.

// revNode is one revision of the universe.
type revNode struct {
	rev     string
	gen     int
	hash    string
	parent  string // the universe parent, "" for generation 1
	deleted bool
	body    json.RawMessage // canonical
	atts    map[string]*attModel
}

// attModel is one attachment of a revision.
type attModel struct {
	ctype  string
	data   []byte
	digest string // CouchDB's "md5-<base64>"
	revpos int
}

// docModel is one document: its universe and what the peers know of it.
type docModel struct {
	id       string
	universe map[string]*revNode
	known    map[string]bool // revisions in the peers' trees
	linked   map[string]bool // child rev -> the link to its parent is known
	// own marks revisions that first arrived as a document's own rev (not
	// as an ancestor). pouchdb-server keeps "status: missing" on the others
	// forever, because it ignores a replicated revision it already has.
	own map[string]bool
	// chaos docs may receive histories on which pouchdb-server is known to
	// differ from CouchDB; tainted is set once one was sent, after which the
	// document is checked against the model only.
	chaos, tainted bool
	// localEpoch and pouchEpoch number the write (per side) that last
	// changed the document, for the changes-feed order check.
	localEpoch, pouchEpoch int
	// pouchChecked is pouchEpoch when pouchdb-server was last compared.
	pouchChecked int
	log          []string
}

func newDocModel(id string) *docModel {
	return &docModel{id: id, universe: map[string]*revNode{}, known: map[string]bool{}, linked: map[string]bool{}, own: map[string]bool{}}
}

func (m *docModel) logf(format string, args ...any) {
	m.log = append(m.log, sprintf(format, args...))
}

// exists reports whether the peers have any revision of the document.
func (m *docModel) exists() bool { return len(m.known) > 0 }

// knownParent returns the parent of rev in the peers' forest, or "".
func (m *docModel) knownParent(rev string) string {
	if !m.linked[rev] {
		return ""
	}
	return m.universe[rev].parent
}

// path returns rev and its known ancestors, newest first.
func (m *docModel) path(rev string) []string {
	p := []string{rev}
	for r := m.knownParent(rev); r != ""; r = m.knownParent(r) {
		p = append(p, r)
	}
	return p
}

// root returns the root of rev's tree in the peers' forest.
func (m *docModel) root(rev string) string {
	p := m.path(rev)
	return p[len(p)-1]
}

// leaves returns the known revisions no known revision descends from,
// sorted as CouchDB sorts a doc_info's revs: winner first (not deleted,
// then generation, then hash, all descending).
func (m *docModel) leaves() []*revNode {
	isParent := map[string]bool{}
	for r := range m.known {
		if p := m.knownParent(r); p != "" {
			isParent[p] = true
		}
	}
	var out []*revNode
	for r := range m.known {
		if !isParent[r] {
			out = append(out, m.universe[r])
		}
	}
	sort.Slice(out, func(i, j int) bool { return revAfter(out[i], out[j]) })
	return out
}

// revAfter orders revisions as CouchDB picks winners: a live revision beats
// a deleted one, then the higher generation, then the higher hash (bytes).
func revAfter(a, b *revNode) bool {
	if a.deleted != b.deleted {
		return !a.deleted
	}
	if a.gen != b.gen {
		return a.gen > b.gen
	}
	return a.hash > b.hash
}

func (m *docModel) isLeaf(rev string) bool {
	if !m.known[rev] {
		return false
	}
	for r := range m.known {
		if m.knownParent(r) == rev {
			return false
		}
	}
	return true
}

// winner returns the winning leaf, or nil when the document does not exist.
func (m *docModel) winner() *revNode {
	l := m.leaves()
	if len(l) == 0 {
		return nil
	}
	return l[0]
}

// addRev puts a new revision into the universe.
func (m *docModel) addRev(rev, parent string, deleted bool, body json.RawMessage) *revNode {
	gen, hash, err := couchdoc.ParseRev(rev)
	if err != nil {
		panic(err)
	}
	n := &revNode{rev: rev, gen: gen, hash: hash, parent: parent, deleted: deleted, body: canonical(body)}
	m.universe[rev] = n
	return n
}

// pathEffect tells what replicating a history (newest first) would do,
// without doing it: whether the forest changes, and whether pouchdb-server
// would end up with a different forest than CouchDB.
//
// CouchDB 3 drops a replicated document whose revision it already has
// (couch_db prep_and_validate_replicated_updates keeps only documents that
// become new leaves), even when its history would join that revision to
// older ones; pouchdb-server does the same (updateDoc skips a revision it
// has). A new revision's path is merged: couch_key_tree merge_tree grafts
// it into the first tree it overlaps, and when that leaves revisions in two
// trees, stem's repair_tree re-merges all leaf paths into disjoint trees.
// pouchdb-merge doMerge instead grafts the path into every tree it
// overlaps (sharing nodes between them) and its stem pass re-merges only
// trees rooted at the same position, so a path overlapping two trees
// leaves duplicate subtrees and stale leaves there: that is the one case
// where pouchdb-server's forest differs.
func (m *docModel) pathEffect(path []string) (changed, pouchDiffers bool) {
	if m.known[path[0]] {
		return false, false
	}
	roots := map[string]bool{}
	for _, r := range path {
		if m.known[r] {
			roots[m.root(r)] = true
		}
	}
	return true, len(roots) > 1
}

// applyPath replicates a history (newest first, consistent with the
// universe) into the peers' forest and reports whether the forest changed.
func (m *docModel) applyPath(path []string) bool {
	if m.known[path[0]] {
		return false
	}
	m.own[path[0]] = true
	for i, r := range path {
		m.known[r] = true
		if i+1 < len(path) {
			if m.universe[r].parent != path[i+1] {
				panic("history inconsistent with the universe: " + strings.Join(path, ","))
			}
			m.linked[r] = true
		}
	}
	return true
}

// editOutcome is CouchDB 3's answer to a new_edits=true write naming
// parent ("" for none): whether it is accepted, and the revision the new
// one extends ("" for a new root). On a document that does not exist, a
// write without a rev creates it (live or deleted) and one with a rev is a
// conflict. On a document whose leaves are all deleted, only a live write
// without a rev is accepted: it extends the winning tombstone
// (couch_db_updater merge_rev_tree "recreating a document that was
// previously deleted"); naming a tombstone is a 409 (apache/couchdb#3177).
// Otherwise a write naming a leaf (live or deleted) extends it, and
// anything else is a 409.
func (m *docModel) editOutcome(parent string, deleted bool) (ok bool, extends string) {
	w := m.winner()
	switch {
	case w == nil:
		return parent == "", ""
	case w.deleted:
		if parent == "" && !deleted {
			return true, w.rev
		}
		return false, ""
	case parent == "":
		return false, ""
	case m.isLeaf(parent):
		return true, parent
	}
	return false, ""
}

// revsDiff is CouchDB's _revs_diff answer for one document (couch_db
// find_missing): the queried revisions not in the tree (a revision known
// only as an ancestor is not missing), and as possible ancestors every leaf
// whose generation is below that of some missing revision. Nil when
// nothing is missing.
func (m *docModel) revsDiff(revs []string) *couchdoc.RevsDiffResult {
	var missing []string
	maxGen := 0
	for _, r := range revs {
		if m.known[r] {
			continue
		}
		missing = append(missing, r)
		if g, _, err := couchdoc.ParseRev(r); err == nil && g > maxGen {
			maxGen = g
		}
	}
	if len(missing) == 0 {
		return nil
	}
	res := &couchdoc.RevsDiffResult{Missing: missing}
	for _, l := range m.leaves() {
		if l.gen < maxGen {
			res.PossibleAncestors = append(res.PossibleAncestors, l.rev)
		}
	}
	return res
}

// pouchRevsDiff is what pouchdb-server answers instead: it also lists
// revisions it holds only as ancestors ("status: missing"), and gives no
// possible_ancestors.
func (m *docModel) pouchRevsDiff(revs []string) []string {
	var missing []string
	for _, r := range revs {
		if !m.known[r] || !m.own[r] {
			missing = append(missing, r)
		}
	}
	return missing
}

// revisions returns the _revisions of a known revision: its known path.
func (m *docModel) revisions(rev string) *couchdoc.Revisions {
	p := m.path(rev)
	r := &couchdoc.Revisions{Start: m.universe[rev].gen}
	for _, x := range p {
		r.IDs = append(r.IDs, m.universe[x].hash)
	}
	return r
}

func canonical(body json.RawMessage) json.RawMessage {
	c, err := couchdoc.CanonicalBody(body)
	if err != nil {
		panic(err)
	}
	return c
}

func revStrings(ns []*revNode) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.rev
	}
	return out
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}
