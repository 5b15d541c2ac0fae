package revtree

import "testing"

func TestRemoveLeaves(t *testing.T) {
	build := func() *Tree {
		tr := &Tree{}
		tr.Merge(p(t, "3-c 2-b 1-a"), false)
		tr.Merge(p(t, "3-fa 2-fb 1-a"), false)
		tr.Merge(p(t, "4-e 3-d 2-b 1-a"), true)
		return tr
	}
	cases := []struct {
		name, purge, removed, left string
	}{
		{"one branch", "3-fa", "3-fa", "1-a 2-b<1-a 3-c<2-b 3-d<2-b 4-e<3-d*"},
		{"shared ancestor kept", "3-c", "3-c", "1-a 2-b<1-a 2-fb<1-a 3-d<2-b 3-fa<2-fb 4-e<3-d*"},
		{"not a leaf", "2-b 3-d", "", "1-a 2-b<1-a 2-fb<1-a 3-c<2-b 3-d<2-b 3-fa<2-fb 4-e<3-d*"},
		{"unknown", "9-ff", "", "1-a 2-b<1-a 2-fb<1-a 3-c<2-b 3-d<2-b 3-fa<2-fb 4-e<3-d*"},
		{"two", "3-c 4-e", "3-c 4-e", "1-a 2-fb<1-a 3-fa<2-fb"},
		{"all", "3-c 4-e 3-fa", "3-c 3-fa 4-e", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := build()
			got := tr.RemoveLeaves(p(t, c.purge))
			var gs []string
			for _, r := range got {
				gs = append(gs, r.String())
			}
			if s := join(gs); s != c.removed {
				t.Errorf("removed %q, want %q", s, c.removed)
			}
			if d := dump(tr); d != c.left {
				t.Errorf("left %q, want %q", d, c.left)
			}
			if len(tr.Nodes) > 0 {
				if err := tr.Check(); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
