package revtree

import (
	"slices"
	"sort"
	"strconv"

	"github.com/settee/settee/couchdoc"
)

// Rev is one revision id split into its generation and hash.
type Rev struct {
	Gen  int
	Hash string
}

// String formats the revision as "N-hash".
func (r Rev) String() string { return strconv.Itoa(r.Gen) + "-" + r.Hash }

// MaxGen bounds a revision's generation in a tree (the tree encoding
// relies on it).
const MaxGen = 1<<31 - 1

// ParseRev parses a revision id with couchdoc.ParseRev (CouchDB's rule;
// the hash comes back canonical). A generation the store cannot hold
// (above MaxGen) parses: such a revision is simply never found, and
// CheckStorable refuses to write it.
func ParseRev(s string) (Rev, error) {
	gen, hash, err := couchdoc.ParseRev(s)
	if err != nil {
		return Rev{}, err
	}
	return Rev{Gen: gen, Hash: hash}, nil
}

// CheckStorable reports whether a tree can hold r: its generation must be
// 0 (CouchDB stores "0-x" too) to MaxGen. Otherwise it is ErrBadRequest
// naming the revision.
func CheckStorable(r Rev) error {
	if r.Gen < 0 || r.Gen > MaxGen {
		return couchdoc.Errorf(couchdoc.ErrBadRequest, "Invalid rev format: generation of %q is out of range (0 to %d)", r.String(), MaxGen)
	}
	return nil
}

// Node is one revision in a tree. A node's generation is always its
// parent's plus one; a root (Parent -1) may have any generation when older
// history was stemmed or never known.
type Node struct {
	Rev
	Parent  int // index in Tree.Nodes, -1 for a root
	Deleted bool
}

// Tree is a document's revision forest. Nodes are kept sorted by
// generation then hash (so parents come before children and encoding is
// deterministic); indexes change when the tree changes.
type Tree struct {
	Nodes []Node
}

// Find returns the index of rev, or -1.
func (t *Tree) Find(r Rev) int {
	// Nodes are sorted by (gen, hash): binary search.
	i := sort.Search(len(t.Nodes), func(i int) bool { return !less(t.Nodes[i].Rev, r) })
	if i < len(t.Nodes) && t.Nodes[i].Rev == r {
		return i
	}
	return -1
}

func less(a, b Rev) bool {
	if a.Gen != b.Gen {
		return a.Gen < b.Gen
	}
	return a.Hash < b.Hash
}

// childCounts returns how many children each node has.
func (t *Tree) childCounts() []int {
	c := make([]int, len(t.Nodes))
	for _, n := range t.Nodes {
		if n.Parent >= 0 {
			c[n.Parent]++
		}
	}
	return c
}

// IsLeaf reports whether node i has no children.
func (t *Tree) IsLeaf(i int) bool {
	for _, n := range t.Nodes {
		if n.Parent == i {
			return false
		}
	}
	return true
}

// Better reports whether a wins over b by CouchDB's rule: a live revision
// beats a deleted one, then the higher generation, then the higher id in
// CouchDB's order of ids (couchdoc.CompareRevIDs).
func Better(a, b Node) bool {
	if a.Deleted != b.Deleted {
		return !a.Deleted
	}
	if a.Gen != b.Gen {
		return a.Gen > b.Gen
	}
	return couchdoc.CompareRevIDs(a.Hash, b.Hash) > 0
}

// Leaves returns the indexes of the leaves, the winner first and the others
// in the same order of preference.
func (t *Tree) Leaves() []int {
	cc := t.childCounts()
	var leaves []int
	for i := range t.Nodes {
		if cc[i] == 0 {
			leaves = append(leaves, i)
		}
	}
	// Better is a total order on a tree's nodes (revisions are unique), so
	// any sort gives the one result; slices.SortFunc allocates nothing.
	slices.SortFunc(leaves, func(x, y int) int {
		switch {
		case Better(t.Nodes[x], t.Nodes[y]):
			return -1
		case Better(t.Nodes[y], t.Nodes[x]):
			return 1
		}
		return 0
	})
	return leaves
}

// Winner returns the index of the winning leaf, or -1 for an empty tree.
func (t *Tree) Winner() int {
	cc := t.childCounts()
	w := -1
	for i := range t.Nodes {
		if cc[i] == 0 && (w < 0 || Better(t.Nodes[i], t.Nodes[w])) {
			w = i
		}
	}
	return w
}

// Path returns node i and its known ancestors, newest first.
func (t *Tree) Path(i int) []int {
	var p []int
	for ; i >= 0; i = t.Nodes[i].Parent {
		p = append(p, i)
	}
	return p
}

// History returns the revision ids of node i and its ancestors as a
// _revisions member.
func (t *Tree) History(i int) *couchdoc.Revisions {
	p := t.Path(i)
	r := &couchdoc.Revisions{Start: t.Nodes[i].Gen, IDs: make([]string, len(p))}
	for k, j := range p {
		r.IDs[k] = t.Nodes[j].Hash
	}
	return r
}

// IsAncestor reports whether node a is node b or one of its ancestors.
func (t *Tree) IsAncestor(a, b int) bool {
	for ; b >= 0; b = t.Nodes[b].Parent {
		if b == a {
			return true
		}
	}
	return false
}

// LeavesUnder returns the leaves descending from node i (i itself if it is
// a leaf), the best first.
func (t *Tree) LeavesUnder(i int) []int {
	if t.IsLeaf(i) {
		// What a replication asks for nearly always: no ordering to do.
		return []int{i}
	}
	var out []int
	for _, l := range t.Leaves() {
		if t.IsAncestor(i, l) {
			out = append(out, l)
		}
	}
	return out
}

// Clone returns a deep copy.
func (t *Tree) Clone() *Tree {
	return &Tree{Nodes: append([]Node(nil), t.Nodes...)}
}

// AddLeaf adds a new child of parent (-1 for a new root) and returns its
// index after normalisation. It is the local-edit (new_edits=true) path;
// the caller has checked that parent is a leaf.
func (t *Tree) AddLeaf(parent int, r Rev, deleted bool) int {
	t.Nodes = append(t.Nodes, Node{Rev: r, Parent: parent, Deleted: deleted})
	t.normalize()
	return t.Find(r)
}
