package revtree

import (
	"encoding/binary"
	"errors"
	"slices"

	"github.com/settee/settee/couchdoc"
)

// codecVersion leads every encoded tree so the format can evolve.
const codecVersion = 1

// Marshal encodes the tree compactly: per node its generation, hash,
// parent (index+1, 0 for a root) and deleted flag.
func (t *Tree) Marshal() []byte {
	b := make([]byte, 0, 2+len(t.Nodes)*40)
	b = append(b, codecVersion)
	b = binary.AppendUvarint(b, uint64(len(t.Nodes)))
	for _, n := range t.Nodes {
		b = binary.AppendUvarint(b, uint64(n.Gen))
		b = binary.AppendUvarint(b, uint64(len(n.Hash)))
		b = append(b, n.Hash...)
		b = binary.AppendUvarint(b, uint64(n.Parent+1))
		if n.Deleted {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	return b
}

var errCorrupt = errors.New("revtree: corrupt encoded tree")

// Unmarshal decodes a tree encoded by Marshal.
func Unmarshal(b []byte) (*Tree, error) {
	if len(b) < 1 || b[0] != codecVersion {
		return nil, errCorrupt
	}
	b = b[1:]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	count, ok := next()
	if !ok || count > uint64(len(b)) {
		return nil, errCorrupt
	}
	t := &Tree{Nodes: make([]Node, 0, count)}
	for i := uint64(0); i < count; i++ {
		gen, ok1 := next()
		hl, ok2 := next()
		if !ok1 || !ok2 || hl > uint64(len(b)) || gen > MaxGen {
			return nil, errCorrupt
		}
		hash := string(b[:hl])
		b = b[hl:]
		p, ok3 := next()
		if !ok3 || len(b) < 1 || p > i || b[0] > 1 {
			return nil, errCorrupt
		}
		del := b[0] == 1
		b = b[1:]
		t.Nodes = append(t.Nodes, Node{Rev: Rev{Gen: int(gen), Hash: hash}, Parent: int(p) - 1, Deleted: del})
	}
	if len(b) != 0 {
		return nil, errCorrupt
	}
	return t, t.Check()
}

// Check verifies the tree's invariants: nodes sorted and unique, each
// parent before its child and one generation older.
func (t *Tree) Check() error {
	for i, n := range t.Nodes {
		if i > 0 && !less(t.Nodes[i-1].Rev, n.Rev) {
			return errors.New("revtree: nodes not sorted or duplicated")
		}
		if n.Gen < 0 {
			return errors.New("revtree: bad revision")
		}
		if n.Parent >= 0 {
			if n.Parent >= i || t.Nodes[n.Parent].Gen != n.Gen-1 {
				return errors.New("revtree: bad parent")
			}
		}
	}
	return nil
}

// Canonicalize puts every rev id of the tree in the form CouchDB keeps it
// (couchdoc.CanonRevID), as a tree written before ids were opaque may not
// have them (upper-case hex, 16 hex digits). It returns the revisions it
// renamed, old to new. ok is false, and the tree unchanged, when two
// revisions would become one.
func (t *Tree) Canonicalize() (renamed map[string]string, ok bool) {
	var out []Node
	for i, n := range t.Nodes {
		c, valid := couchdoc.CanonRevID(n.Hash)
		if !valid || c == n.Hash {
			continue
		}
		if out == nil {
			out = slices.Clone(t.Nodes)
			renamed = make(map[string]string)
		}
		out[i].Hash = c
		renamed[n.Rev.String()] = out[i].Rev.String()
	}
	if out == nil {
		return nil, true
	}
	seen := make(map[Rev]bool, len(out))
	for _, n := range out {
		if seen[n.Rev] {
			return nil, false
		}
		seen[n.Rev] = true
	}
	t.Nodes = out
	t.normalize()
	return renamed, true
}
