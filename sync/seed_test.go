package sync

import "testing"

func TestSharedIdentity(t *testing.T) {
	log := func(ids ...string) *ReplicationLog {
		l := &ReplicationLog{SessionID: ids[0]}
		for _, id := range ids {
			l.History = append(l.History, HistoryEntry{SessionID: id})
		}
		return l
	}
	cases := []struct {
		name string
		a, b *ReplicationLog
		want bool
	}{
		{"in step", log("s2", "s1"), log("s2", "s1"), false},
		{"first replication", nil, log("s1"), false},
		{"crash between the two writes", log("s3", "s2", "s1"), log("s2", "s1"), false},
		{"peer restored from a backup", log("s3", "s2", "s1"), log("s1"), false},
		{"a twin checkpointed over ours", log("s3", "s2", "s1"), log("t1", "s2", "s1"), true},
		{"a twin from the very start", log("s1"), log("t1"), true},
	}
	for _, c := range cases {
		if got := sharedIdentity(c.a, c.b); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if got := sharedIdentity(c.b, c.a); got != c.want {
			t.Errorf("%s (swapped): %v, want %v", c.name, got, c.want)
		}
	}
}
