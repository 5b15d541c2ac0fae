package sync

import "sync/atomic"

// listener is one AddListener registration.
type listener struct {
	fn      func(Event)
	docs    bool // wants EventDocs
	removed atomic.Bool
}

// AddListener registers fn for the supervisor's events, beside
// Options.OnEvent and delivered the same way: on the supervisor's event
// goroutine, one event at a time, after OnEvent. With docs, the sessions
// also send EventDocs (to OnEvent as well) while the registration lasts.
// The returned remove ends it; after it returns fn is not called again,
// unless a call is under way. remove may be called from inside fn.
func (s *Supervisor) AddListener(fn func(Event), docs bool) (remove func()) {
	l := &listener{fn: fn, docs: docs}
	s.mu.Lock()
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
	if docs {
		s.docListeners.Add(1)
	}
	return func() {
		if l.removed.Swap(true) {
			return
		}
		if docs {
			s.docListeners.Add(-1)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, x := range s.listeners {
			if x == l {
				s.listeners = append(s.listeners[:i:i], s.listeners[i+1:]...)
				break
			}
		}
	}
}

// wantsDocs reports whether a registered listener wants EventDocs: the
// sessions' Options.docsWanted.
func (s *Supervisor) wantsDocs() bool { return s.docListeners.Load() > 0 }

// deliver hands ev to OnEvent and the listeners, on the event goroutine.
func (s *Supervisor) deliver(ev Event) {
	if on := s.cfg.Options.OnEvent; on != nil {
		on(ev)
	}
	s.mu.Lock()
	ls := s.listeners
	s.mu.Unlock()
	for _, l := range ls {
		if l.removed.Load() || ev.Kind == EventDocs && !l.docs {
			continue
		}
		l.fn(ev)
	}
}
