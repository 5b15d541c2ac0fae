package revtree

import (
	"cmp"
	"slices"
	"sort"

	"github.com/settee/settee/couchdoc"
)

// PathFromRevisions expands a _rev and its _revisions into a path, newest
// first. Without revisions the path is the revision alone.
func PathFromRevisions(rev string, revs *couchdoc.Revisions) ([]Rev, error) {
	if err := couchdoc.ValidateRevisions(rev, revs); err != nil {
		return nil, err
	}
	r, err := ParseRev(rev)
	if err != nil {
		return nil, err
	}
	if err := CheckStorable(r); err != nil {
		return nil, err
	}
	if revs == nil {
		return []Rev{r}, nil
	}
	path := make([]Rev, len(revs.IDs))
	for i, h := range revs.IDs {
		path[i] = Rev{Gen: revs.Start - i, Hash: h}
	}
	return path, nil
}

// Merge merges a replicated history into the tree the way CouchDB's
// couch_key_tree:merge does, and returns the index of the path's newest
// revision and whether that revision was new to the tree. path is newest
// first with consecutive generations (see PathFromRevisions); deleted is the
// newest revision's deleted flag, used when it is added.
//
// The path joins the tree at its oldest revision the tree knows. When that
// revision is a root of the tree (its history was stemmed or never known)
// the path's older revisions become its ancestors, so a longer history
// extends a stemmed branch. A path sharing no revision with the tree starts
// a new branch of its own. Revisions the path leads through that are roots
// of other branches are joined on. A history that contradicts the tree
// (a known revision under a different parent) keeps the tree's parent.
func (t *Tree) Merge(path []Rev, deleted bool) (leaf int, added bool) {
	idx := make(map[Rev]int, len(t.Nodes)+len(path))
	for i, n := range t.Nodes {
		idx[n.Rev] = i
	}
	// Oldest known revision of the path.
	j := -1
	for k := len(path) - 1; k >= 0; k-- {
		if _, ok := idx[path[k]]; ok {
			j = k
			break
		}
	}
	add := func(r Rev, parent int) int {
		t.Nodes = append(t.Nodes, Node{Rev: r, Parent: parent})
		idx[r] = len(t.Nodes) - 1
		return len(t.Nodes) - 1
	}
	cur := -1
	if j < 0 {
		j = len(path) - 1
		cur = add(path[j], -1)
		if j == 0 {
			added = true
		}
	} else {
		cur = idx[path[j]]
		if t.Nodes[cur].Parent < 0 && j < len(path)-1 {
			// Extend a stemmed root with the older history.
			p := -1
			for k := len(path) - 1; k > j; k-- {
				p = add(path[k], p)
			}
			t.Nodes[cur].Parent = p
		}
	}
	for k := j - 1; k >= 0; k-- {
		if i, ok := idx[path[k]]; ok {
			if t.Nodes[i].Parent < 0 {
				t.Nodes[i].Parent = cur // join a branch whose root we now know
			}
			cur = i
			continue
		}
		cur = add(path[k], cur)
		if k == 0 {
			added = true
		}
	}
	if added {
		t.Nodes[cur].Deleted = deleted
	}
	r := t.Nodes[cur].Rev
	t.normalize()
	return t.Find(r), added
}

// normalize sorts the nodes by (generation, hash) and remaps parents.
func (t *Tree) normalize() {
	n := len(t.Nodes)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return less(t.Nodes[order[a]].Rev, t.Nodes[order[b]].Rev) })
	sorted := true
	for i, o := range order {
		if i != o {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	newIdx := make([]int, n)
	for ni, oi := range order {
		newIdx[oi] = ni
	}
	out := make([]Node, n)
	for ni, oi := range order {
		nd := t.Nodes[oi]
		if nd.Parent >= 0 {
			nd.Parent = newIdx[nd.Parent]
		}
		out[ni] = nd
	}
	t.Nodes = out
}

// Stem keeps, for every leaf, only the newest limit revisions of its
// history, as CouchDB's _revs_limit does, and returns the revisions it
// removed. Nodes whose parent is removed become roots. limit <= 0 keeps all.
func (t *Tree) Stem(limit int) []Rev {
	if limit <= 0 || len(t.Nodes) <= limit {
		return nil
	}
	keep := make([]bool, len(t.Nodes))
	for _, l := range t.Leaves() {
		i := l
		for d := 0; d < limit && i >= 0; d++ {
			keep[i] = true
			i = t.Nodes[i].Parent
		}
	}
	var removed []Rev
	newIdx := make([]int, len(t.Nodes))
	out := t.Nodes[:0:0]
	for i, n := range t.Nodes {
		if !keep[i] {
			removed = append(removed, n.Rev)
			newIdx[i] = -1
			continue
		}
		newIdx[i] = len(out)
		out = append(out, n)
	}
	if removed == nil {
		return nil
	}
	for i := range out {
		if p := out[i].Parent; p >= 0 {
			out[i].Parent = newIdx[p]
		}
	}
	t.Nodes = out
	return removed
}

// Missing returns the revisions of revs the tree does not know and
// CouchDB's possible ancestors for them: the leaves whose generation is
// lower than that of some missing revision (chttpd_db's
// possible_ancestors). As couch_key_tree:find_missing, the missing ones
// come sorted (generation, then CouchDB's order of ids) and each revision
// of the tree takes away one of its occurrences in revs, so a revision
// listed twice that the tree has is still missing once. An empty tree is
// a document CouchDB does not have: then every rev is missing, in input
// order, duplicates and all.
//
// revs may be reordered.
func (t *Tree) Missing(revs []Rev) (missing []Rev, possible []Rev) {
	if len(t.Nodes) == 0 {
		missing = revs
	} else {
		if len(revs) > 1 && !slices.IsSortedFunc(revs, CompareRevs) {
			slices.SortStableFunc(revs, CompareRevs)
		}
		for k, r := range revs {
			// Sorted, so copies of a revision are neighbours: the first
			// copy of one the tree has is taken away, the others stay.
			if t.Find(r) >= 0 && (k == 0 || revs[k-1] != r) {
				continue
			}
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	maxGen := 0
	for _, r := range missing {
		maxGen = max(maxGen, r.Gen)
	}
	for _, l := range t.Leaves() {
		if t.Nodes[l].Gen < maxGen {
			possible = append(possible, t.Nodes[l].Rev)
		}
	}
	return missing, possible
}

// CompareRevs orders revisions as CouchDB sorts {Pos, RevId}: by
// generation, then by couchdoc.CompareRevIDs.
func CompareRevs(a, b Rev) int {
	if a.Gen != b.Gen {
		return cmp.Compare(a.Gen, b.Gen)
	}
	return couchdoc.CompareRevIDs(a.Hash, b.Hash)
}
