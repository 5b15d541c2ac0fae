package multirow

import "testing"

func TestTake(t *testing.T) {
	for _, c := range []struct{ rows, want int }{{1, 1}, {2, 2}, {3, 2}, {7, 4}, {64, 64}, {99, 64}, {100, 100}, {261, 100}} {
		if got := Take(c.rows); got != c.want {
			t.Errorf("Take(%d) = %d, want %d", c.rows, got, c.want)
		}
	}
}

func TestQuery(t *testing.T) {
	got := Query("INSERT INTO t (a, b)", 2, 3, " ON CONFLICT DO NOTHING")
	want := "INSERT INTO t (a, b) VALUES (?, ?), (?, ?), (?, ?) ON CONFLICT DO NOTHING"
	if got != want {
		t.Errorf("Query = %q, want %q", got, want)
	}
}
