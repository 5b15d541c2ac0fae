package sync

import (
	"bytes"
	"maps"
	"slices"
)

// Status snapshots the supervisor: the running session's status, or the
// last session's when none runs, with Stats totalled over its sessions.
// State is StateOffline while it is started and SetOnline(false), and
// StateActive while a session that ended is being finished (CaughtUp);
// LastError is why the last session failed, if it did.
func (s *Supervisor) Status() Status {
	s.mu.Lock()
	sess, st, state := s.sess, s.final, s.state
	st.Directions = slices.Clone(st.Directions)
	offline := s.want && !s.online
	retrying := maps.Clone(s.offline)
	serr := s.err
	base := make(map[string]Stats, len(s.base))
	for k, v := range s.base {
		base[k] = v
	}
	s.mu.Unlock()
	if sess != nil {
		st = sess.Status()
		if st.State == StateStopped {
			st.State = StateActive // ended: the loop is finishing it
		}
		st = markRetrying(st, retrying)
	} else {
		st.State = state
	}
	if len(st.Directions) == 0 {
		st.Stats.Add(base[st.Replication])
	}
	for i := range st.Directions {
		d := &st.Directions[i]
		d.Stats.Add(base[d.Replication])
		st.Stats.Add(base[d.Replication])
	}
	if offline {
		st.State = StateOffline
		for i := range st.Directions {
			st.Directions[i].State = StateOffline
		}
	}
	if serr != nil {
		st.LastError = serr
	}
	st.Completed, st.Total = s.progress.update(st.Stats.DocsCompleted, st.Pending)
	return st
}

// markRetrying shows as offline the directions that went offline and are
// trying again (StateStarting), and a sync with one of them.
func markRetrying(st Status, retrying map[string]bool) Status {
	if len(st.Directions) == 0 {
		if retrying[st.Replication] && st.State == StateStarting {
			st.State = StateOffline
		}
		return st
	}
	st.Directions = slices.Clone(st.Directions)
	for i := range st.Directions {
		d := &st.Directions[i]
		if retrying[d.Replication] && d.State == StateStarting {
			d.State = StateOffline
		}
		if d.State == StateOffline && st.State != StateError && st.State != StateUnauthorized {
			st.State = StateOffline
		}
	}
	return st
}

// queueLocked queues ev for OnEvent: progress replaces the direction's
// progress still queued; past maxQueuedEvents, a state change replaces
// the direction's queued state changes too and a doc failure is dropped.
func (s *Supervisor) queueLocked(ev Event) {
	if s.cfg.Options.OnEvent == nil && len(s.listeners) == 0 {
		return
	}
	full := len(s.queue) >= maxQueuedEvents
	switch {
	case ev.Kind == EventProgress || ev.Kind == EventState && full:
		s.queue = slices.DeleteFunc(s.queue, func(q Event) bool {
			return q.Replication == ev.Replication && (q.Kind == EventProgress || full && q.Kind == EventState)
		})
	case full:
		return
	}
	s.queue = append(s.queue, ev)
	if !s.dispatching {
		s.dispatching = true
		go s.dispatch()
	}
	s.wakeDispatcherLocked()
}

func (s *Supervisor) wakeDispatcherLocked() {
	select {
	case s.qWake <- struct{}{}:
	default:
	}
}

// dispatch delivers queued events to OnEvent until the queue is empty and
// the loop has exited.
func (s *Supervisor) dispatch() {
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			if !s.looping {
				s.dispatching = false
				s.idle.Broadcast()
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
			<-s.qWake
			continue
		}
		ev := s.queue[0]
		s.queue[0] = Event{}
		s.queue = s.queue[1:]
		if ev.Kind == EventProgress && sameProgress(s.lastSent[ev.Replication], ev.Status) {
			s.mu.Unlock()
			continue
		}
		s.lastSent[ev.Replication] = ev.Status
		s.mu.Unlock()
		s.deliver(ev)
	}
}

// sameProgress reports whether two statuses of a direction show the same
// state and progress.
func sameProgress(a, b Status) bool {
	return a.State == b.State && a.Stats == b.Stats && a.Pending == b.Pending &&
		bytes.Equal(a.LastSeq, b.LastSeq) && bytes.Equal(a.CheckpointedSeq, b.CheckpointedSeq)
}
