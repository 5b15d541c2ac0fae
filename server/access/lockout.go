package access

import (
	gosync "sync"
	"time"

	"github.com/settee/settee/couchdoc"
)

// ErrLocked is CouchDB 3.5's answer (chttpd_auth_lockout) to a login for a
// user that failed too often from the same address.
var ErrLocked = couchdoc.Errorf(couchdoc.ErrForbidden, "Account is temporarily locked due to multiple authentication failures")

// Lockout counts failed logins per (peer address, user name) as CouchDB's
// chttpd_auth_lockout in enforce mode: after Threshold failures within
// Lifetime, further attempts for that pair are refused, even with the
// right password, until the window passes.
type Lockout struct {
	Threshold  int           // default 5
	Lifetime   time.Duration // default 5 min
	MaxEntries int           // default 10,000

	mu    gosync.Mutex
	fails map[lockKey]*lockEntry
}

type lockKey struct{ peer, name string }

type lockEntry struct {
	count int
	first time.Time
}

func (l *Lockout) params() (int, time.Duration, int) {
	t, life, max := l.Threshold, l.Lifetime, l.MaxEntries
	if t <= 0 {
		t = 5
	}
	if life <= 0 {
		life = 5 * time.Minute
	}
	if max <= 0 {
		max = 10000
	}
	return t, life, max
}

// Locked reports whether logins of name from peer are refused at now.
func (l *Lockout) Locked(peer, name string, now time.Time) bool {
	if l == nil {
		return false
	}
	t, life, _ := l.params()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.fails[lockKey{peer, name}]
	if e == nil {
		return false
	}
	if now.Sub(e.first) >= life {
		delete(l.fails, lockKey{peer, name})
		return false
	}
	return e.count >= t
}

// Fail records a failed login of name from peer.
func (l *Lockout) Fail(peer, name string, now time.Time) {
	if l == nil {
		return
	}
	_, life, max := l.params()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fails == nil {
		l.fails = map[lockKey]*lockEntry{}
	}
	k := lockKey{peer, name}
	e := l.fails[k]
	if e == nil || now.Sub(e.first) >= life {
		if len(l.fails) >= max {
			for old, oe := range l.fails {
				if now.Sub(oe.first) >= life || len(l.fails) >= max {
					delete(l.fails, old)
				}
				if len(l.fails) < max {
					break
				}
			}
		}
		e = &lockEntry{first: now}
		l.fails[k] = e
	}
	e.count++
}
