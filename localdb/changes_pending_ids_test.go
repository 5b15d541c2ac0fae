package localdb_test

import (
	"fmt"
	"testing"
)

// TestPendingChangesOf counts, among listed ids, the documents changed
// after a seq; unknown and repeated ids count nothing more, and more ids
// than one query takes are counted in pages.
func TestPendingChangesOf(t *testing.T) {
	db := open(t)
	ra := put(t, db, "a", "", `{}`) // 1
	put(t, db, "b", "", `{}`)       // 2
	put(t, db, "c", "", `{}`)       // 3
	put(t, db, "a", ra, `{}`)       // a moves to 4
	many := []string{"a", "a", "b", "zz"}
	for i := range 1200 {
		many = append(many, fmt.Sprintf("x%d", i))
	}
	for _, tc := range []struct {
		seq  int64
		ids  []string
		want int64
	}{
		{0, []string{"a", "b", "c"}, 3},
		{2, []string{"a", "b", "c"}, 2},
		{3, []string{"a", "b", "c"}, 1},
		{4, []string{"a", "b", "c"}, 0},
		{0, many, 2},
		{0, nil, 0},
	} {
		n, err := db.PendingChangesOf(bg, tc.seq, tc.ids)
		if err != nil || n != tc.want {
			t.Errorf("after %d, %d ids: %d, %v; want %d", tc.seq, len(tc.ids), n, err, tc.want)
		}
	}
}
