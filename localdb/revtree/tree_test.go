package revtree

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// p builds a path from "3-c 2-b 1-a" (newest first).
func p(t testing.TB, s string) []Rev {
	t.Helper()
	var out []Rev
	for _, f := range strings.Fields(s) {
		r, err := ParseRev(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// dump renders the tree as "rev<parent" entries sorted, "*" for deleted.
func dump(tr *Tree) string {
	var parts []string
	for _, n := range tr.Nodes {
		s := n.Rev.String()
		if n.Parent >= 0 {
			s += "<" + tr.Nodes[n.Parent].Rev.String()
		}
		if n.Deleted {
			s += "*"
		}
		parts = append(parts, s)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func revs(tr *Tree, idx []int) string {
	var out []string
	for _, i := range idx {
		out = append(out, tr.Nodes[i].Rev.String())
	}
	return strings.Join(out, " ")
}

func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		name   string
		paths  []string // merged in order; a trailing "*" marks the leaf deleted
		want   string
		leaves string // winner first
		added  bool   // of the last merge
	}{
		{"single", []string{"1-a"}, "1-a", "1-a", true},
		{"linear", []string{"1-a", "2-b 1-a"}, "1-a 2-b<1-a", "2-b", true},
		{"same again", []string{"2-b 1-a", "2-b 1-a"}, "1-a 2-b<1-a", "2-b", false},
		{"ancestor again", []string{"2-b 1-a", "1-a"}, "1-a 2-b<1-a", "2-b", false},
		{"branch", []string{"2-b 1-a", "2-c 1-a"}, "1-a 2-b<1-a 2-c<1-a", "2-c 2-b", true},
		{"two roots", []string{"1-a", "1-b"}, "1-a 1-b", "1-b 1-a", true},
		{"partial overlap", []string{"3-c 2-b 1-a", "5-e 4-d 3-c"}, "1-a 2-b<1-a 3-c<2-b 4-d<3-c 5-e<4-d", "5-e", true},
		{"stemmed history without overlap starts a branch", []string{"2-b 1-a", "5-e 4-d"}, "1-a 2-b<1-a 4-d 5-e<4-d", "5-e 2-b", true},
		{"longer history extends a stemmed root", []string{"4-d 3-c", "3-c 2-b 1-a"}, "1-a 2-b<1-a 3-c<2-b 4-d<3-c", "4-d", false},
		{"bridge joins a stemmed branch", []string{"2-b 1-a", "4-d", "4-d 3-c 2-b"}, "1-a 2-b<1-a 3-c<2-b 4-d<3-c", "4-d", false},
		{"deleted leaf loses", []string{"2-b 1-a", "3-8 2-b 1-a*", "2-c 1-a"}, "1-a 2-b<1-a 2-c<1-a 3-8<2-b*", "2-c 3-8", true},
		{"all deleted: highest wins", []string{"2-b 1-a*", "3-c 2-9 1-a*"}, "1-a 2-9<1-a 2-b<1-a* 3-c<2-9*", "3-c 2-b", true},
		{"generation beats hash", []string{"2-a 1-a", "3-0 2-0 1-a"}, "1-a 2-0<1-a 2-a<1-a 3-0<2-0", "3-0 2-a", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &Tree{}
			var added bool
			for _, s := range tc.paths {
				del := strings.HasSuffix(s, "*")
				_, added = tr.Merge(p(t, strings.TrimSuffix(s, "*")), del)
				if err := tr.Check(); err != nil {
					t.Fatal(err)
				}
			}
			if got := dump(tr); got != tc.want {
				t.Errorf("tree %q, want %q", got, tc.want)
			}
			if got := revs(tr, tr.Leaves()); got != tc.leaves {
				t.Errorf("leaves %q, want %q", got, tc.leaves)
			}
			if added != tc.added {
				t.Errorf("added %v, want %v", added, tc.added)
			}
			if w := tr.Winner(); w != tr.Leaves()[0] {
				t.Errorf("winner %d, leaves[0] %d", w, tr.Leaves()[0])
			}
		})
	}
}

func TestStem(t *testing.T) {
	tr := &Tree{}
	tr.Merge(p(t, "5-e 4-d 3-c 2-b 1-a"), false)
	tr.Merge(p(t, "3-9 2-b 1-a"), false)
	removed := tr.Stem(2)
	if got := dump(tr); got != "2-b 3-9<2-b 4-d 5-e<4-d" {
		t.Fatalf("stemmed %q", got)
	}
	if fmt.Sprint(removed) != "[1-a 3-c]" {
		t.Fatalf("removed %v", removed)
	}
	if h := tr.History(tr.Find(Rev{5, "e"})); h.Start != 5 || fmt.Sprint(h.IDs) != "[e d]" {
		t.Fatalf("history %+v", h)
	}
	// Merging the full history again re-extends, then stemming trims again.
	tr.Merge(p(t, "5-e 4-d 3-c 2-b 1-a"), false)
	tr.Stem(2)
	if got := dump(tr); got != "2-b 3-9<2-b 4-d 5-e<4-d" {
		t.Fatalf("re-stemmed %q", got)
	}
}

func TestMissing(t *testing.T) {
	tr := &Tree{}
	tr.Merge(p(t, "3-c 2-b 1-a"), false)
	tr.Merge(p(t, "2-9 1-a"), true)
	// As CouchDB 3.5 (couch_key_tree:find_missing): sorted, and a rev
	// listed twice stays twice (a known one, once fewer).
	missing, possible := tr.Missing(p(t, "1-a 3-c 4-d 2-7 4-d 3-c"))
	if fmt.Sprint(missing) != "[2-7 3-c 4-d 4-d]" {
		t.Fatalf("missing %v", missing)
	}
	// Leaves with a lower generation than some missing rev: 3-c and 2-9.
	if fmt.Sprint(possible) != "[3-c 2-9]" {
		t.Fatalf("possible %v", possible)
	}
	missing, possible = tr.Missing(p(t, "2-7"))
	if fmt.Sprint(missing) != "[2-7]" || possible != nil {
		t.Fatalf("missing %v possible %v", missing, possible)
	}
	if m, _ := tr.Missing(p(t, "2-b")); m != nil {
		t.Fatalf("known internal rev reported missing")
	}
}

func TestCodecRoundTrip(t *testing.T) {
	tr := &Tree{}
	tr.Merge(p(t, "3-c 2-b 1-a"), false)
	tr.Merge(p(t, "2-9 1-a"), true)
	tr.Merge(p(t, "9-f 8-e"), false)
	got, err := Unmarshal(tr.Marshal())
	if err != nil || !reflect.DeepEqual(got, tr) {
		t.Fatalf("round trip: %v %v", got, err)
	}
	for _, bad := range [][]byte{nil, {2}, {1, 5}, {1, 1, 1, 1, 'a', 2, 0}} {
		if _, err := Unmarshal(bad); err == nil {
			t.Errorf("Unmarshal(%v) accepted", bad)
		}
	}
}

// TestMergeProperties merges random histories of one random "true" tree in
// random order and checks that the result is independent of the order,
// keeps every leaf, and is a fixpoint when merged again.
func TestMergeProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for iter := 0; iter < 300; iter++ {
		// A random true tree: each node picks a parent among earlier nodes.
		type tn struct {
			rev    Rev
			parent int
		}
		var nodes []tn
		n := 1 + rng.Intn(12)
		for i := 0; i < n; i++ {
			parent := -1
			if i > 0 && rng.Intn(8) != 0 {
				parent = rng.Intn(i)
			}
			gen := 1
			if parent >= 0 {
				gen = nodes[parent].rev.Gen + 1
			}
			nodes = append(nodes, tn{Rev{gen, fmt.Sprintf("%x", i+10)}, parent})
		}
		var paths [][]Rev
		for i := range nodes {
			var path []Rev
			for j := i; j >= 0; j = nodes[j].parent {
				path = append(path, nodes[j].rev)
			}
			paths = append(paths, path)
		}
		build := func(order []int) *Tree {
			tr := &Tree{}
			for _, i := range order {
				tr.Merge(paths[i], false)
				if err := tr.Check(); err != nil {
					t.Fatal(err)
				}
			}
			return tr
		}
		a := build(rng.Perm(n))
		b := build(rng.Perm(n))
		if dump(a) != dump(b) {
			t.Fatalf("order dependent:\n%s\n%s", dump(a), dump(b))
		}
		if len(a.Nodes) != n {
			t.Fatalf("got %d nodes, want %d", len(a.Nodes), n)
		}
		before := dump(a)
		for _, path := range paths {
			if _, added := a.Merge(path, false); added {
				t.Fatalf("re-merge added %v", path[0])
			}
		}
		if dump(a) != before {
			t.Fatal("re-merge changed the tree")
		}
		// Stemming keeps every leaf and never more than limit per branch.
		leavesBefore := revs(a, a.Leaves())
		limit := 1 + rng.Intn(4)
		a.Stem(limit)
		if err := a.Check(); err != nil {
			t.Fatal(err)
		}
		if revs(a, a.Leaves()) != leavesBefore {
			t.Fatalf("stem changed leaves")
		}
		// Every kept node is within limit of a leaf (CouchDB 3's stem).
		for i := range a.Nodes {
			near := false
			for _, l := range a.Leaves() {
				for d, j := range a.Path(l) {
					near = near || (j == i && d < limit)
				}
			}
			if !near {
				t.Fatalf("node %v kept further than %d from every leaf", a.Nodes[i].Rev, limit)
			}
		}
	}
}

func FuzzMerge(f *testing.F) {
	f.Add("3-c 2-b 1-a", "2-x 1-a", 2)
	f.Add("5-e 4-d", "4-d 3-c", 1)
	f.Fuzz(func(t *testing.T, a, b string, limit int) {
		tr := &Tree{}
		for _, s := range []string{a, b} {
			path, ok := parsePath(s)
			if !ok {
				return
			}
			tr.Merge(path, false)
			if err := tr.Check(); err != nil {
				t.Fatal(err)
			}
		}
		tr.Stem(limit % 5)
		if err := tr.Check(); err != nil {
			t.Fatal(err)
		}
		if _, err := Unmarshal(tr.Marshal()); err != nil {
			t.Fatal(err)
		}
	})
}

func parsePath(s string) ([]Rev, bool) {
	var out []Rev
	for i, f := range strings.Fields(s) {
		r, err := ParseRev(f)
		if err != nil || r.Gen > 1000 || (i > 0 && r.Gen != out[i-1].Gen-1) {
			return nil, false
		}
		out = append(out, r)
	}
	return out, len(out) > 0
}

func FuzzUnmarshal(f *testing.F) {
	tr := &Tree{}
	tr.Merge([]Rev{{2, "b"}, {1, "a"}}, true)
	f.Add(tr.Marshal())
	f.Add([]byte{1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := Unmarshal(b)
		if err != nil {
			return
		}
		tr.Leaves()
		tr.Winner()
	})
}
