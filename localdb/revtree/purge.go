package revtree

// RemoveLeaves removes the named revisions that are leaves, with every
// ancestor no remaining leaf descends from, as CouchDB's purge does
// (couch_key_tree:remove_leafs), and returns the revisions it removed
// from revs, in tree order. A revision that is not a leaf, or not in the
// tree, is ignored. The tree may be left empty.
func (t *Tree) RemoveLeaves(revs []Rev) []Rev {
	target := make(map[int]bool, len(revs))
	for _, r := range revs {
		if i := t.Find(r); i >= 0 && t.IsLeaf(i) {
			target[i] = true
		}
	}
	if len(target) == 0 {
		return nil
	}
	keep := make([]bool, len(t.Nodes))
	for _, l := range t.Leaves() {
		if target[l] {
			continue
		}
		for i := l; i >= 0 && !keep[i]; i = t.Nodes[i].Parent {
			keep[i] = true
		}
	}
	var removed []Rev
	newIdx := make([]int, len(t.Nodes))
	out := make([]Node, 0, len(t.Nodes))
	for i, n := range t.Nodes {
		if !keep[i] {
			if target[i] {
				removed = append(removed, n.Rev)
			}
			newIdx[i] = -1
			continue
		}
		newIdx[i] = len(out)
		out = append(out, n)
	}
	for i := range out {
		if p := out[i].Parent; p >= 0 {
			out[i].Parent = newIdx[p]
		}
	}
	t.Nodes = out
	return removed
}
