package access

import (
	"testing"
	"time"
)

func TestSessionCookieSaltAndExpiry(t *testing.T) {
	s := Sessions{Secret: []byte("secret"), Timeout: time.Minute}
	now := time.Unix(1700000000, 0)
	v := s.Make("ann", "salt1", now)
	c, ok := ParseCookie(v)
	if !ok || c.Name != "ann" || !c.Issued.Equal(now) {
		t.Fatalf("parse: %v %+v", ok, c)
	}
	if !s.Verify(c, "salt1", now.Add(time.Second)) {
		t.Fatal("fresh cookie refused")
	}
	if s.Verify(c, "salt2", now) {
		t.Fatal("cookie verified with another salt (a changed password)")
	}
	if s.Verify(c, "salt1", now.Add(time.Minute)) {
		t.Fatal("expired cookie accepted")
	}
	other := Sessions{Secret: []byte("other"), Timeout: time.Minute}
	if other.Verify(c, "salt1", now) {
		t.Fatal("cookie of another secret accepted")
	}
	if s.NeedsRenewal(c, now.Add(5*time.Second)) || !s.NeedsRenewal(c, now.Add(7*time.Second)) {
		t.Fatal("renewal is not at 90% of the lifetime left")
	}
	for _, bad := range []string{"", "garbage", "YW5u", "YW5uOlpaOng"} {
		if _, ok := ParseCookie(bad); ok {
			t.Errorf("ParseCookie(%q) accepted", bad)
		}
	}
}
