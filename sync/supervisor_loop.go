package sync

import (
	"context"
	"errors"
	"slices"
	"time"
)

// loop starts and stops sessions until the supervisor is stopped, done
// or failed, or ctx is done.
func (s *Supervisor) loop(ctx context.Context, done chan struct{}) {
	for {
		s.mu.Lock()
		if ctx.Err() != nil {
			s.want = false
		}
		want, online, sess, unauth := s.want, s.online, s.sess, s.unauth
		if !want && sess == nil {
			s.mu.Unlock()
			s.stopCredentialsWait()
			s.mu.Lock()
			if s.want { // started again meanwhile
				s.mu.Unlock()
				continue
			}
			s.exitLocked(done)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		switch {
		case sess != nil && (!want || !online):
			s.endSession(ctx, sess, sess.Stop(), true)
			continue
		case sess == nil && unauth:
			s.waitCredentials(ctx)
		case sess == nil && online:
			s.startSession(ctx)
			continue
		case sess == nil:
			s.waitOffline()
		}
		var sessDone <-chan struct{}
		if sess != nil {
			sessDone = sess.Done()
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
		case <-sessDone:
			s.endSession(ctx, sess, sess.Wait(), false)
		case err := <-s.credsDone:
			s.credentialsChanged(err)
		}
		s.mu.Lock()
		caughtUp := s.caughtUp && s.sess != nil && s.cfg.CaughtUp != nil
		s.caughtUp = false
		s.mu.Unlock()
		if caughtUp {
			s.cfg.CaughtUp(ctx)
		}
	}
}

// exitLocked ends the loop, in the critical section that decided it (so a
// Start after it starts a new loop). A supervisor that waited offline or
// for credentials is stopped now.
func (s *Supervisor) exitLocked(done chan struct{}) {
	if s.state == StateOffline || s.state == StateStarting || s.unauth {
		s.unauth = false // stopped while waiting for credentials
		s.queueStatesLocked(StateStopped, nil)
	}
	s.looping = false
	close(done)
	s.idle.Broadcast()
	s.wakeDispatcherLocked() // it exits once the queue is empty
}

// waitOffline reports the offline state once when the supervisor waits
// for the network with no session (started offline).
func (s *Supervisor) waitOffline() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateOffline {
		return
	}
	s.queueStatesLocked(StateOffline, nil)
}

// startSession starts a session; a failure to start is a permanent error.
func (s *Supervisor) startSession(ctx context.Context) {
	sess, err := s.newSession(true)
	if err == nil {
		err = sess.Start(ctx)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.sess = sess
		return
	}
	s.want, s.err = false, err
	s.queueStatesLocked(StateError, err)
}

// queueStatesLocked sets the supervisor's state while no session runs and
// reports it for each direction, with what the last session left.
func (s *Supervisor) queueStatesLocked(state State, err error) {
	now := time.Now()
	s.state = state
	s.final.State, s.final.Updated = state, now
	s.final.Directions = slices.Clone(s.final.Directions) // Status's copies share the old one
	for i := range s.final.Directions {
		s.final.Directions[i].State, s.final.Directions[i].Updated = state, now
	}
	for _, d := range s.directions() {
		st := s.final
		for _, x := range s.final.Directions {
			if x.Replication == d {
				st = x
			}
		}
		st.Replication, st.Directions, st.Stats, st.LastError = d, nil, s.base[d], err
		s.queueLocked(Event{Kind: EventState, Status: st, Err: err, Time: now})
	}
}

// directions names the directions, as their events do.
func (s *Supervisor) directions() []string {
	if s.cfg.Direction == Both {
		return []string{"push", "pull"}
	}
	return []string{string(s.cfg.Direction)}
}

// endSession records the end of a session, stopped by the loop (Stop,
// offline, ctx done) or ended by itself (one-shot done, or failed), and
// reports the supervisor's state for each direction.
func (s *Supervisor) endSession(ctx context.Context, sess *Replicator, err error, stoppedByUs bool) {
	if err == nil && !stoppedByUs && ctx.Err() == nil && s.cfg.Direction != Push && s.cfg.CaughtUp != nil {
		s.cfg.CaughtUp(ctx) // a one-shot pull completed
	}
	st := sess.Status()
	if err == nil && !stoppedByUs {
		// A one-shot that ended by itself did its work: what the source
		// counts as pending now was written after it read the feed, so
		// the progress ends complete.
		st.Pending = 0
		for i := range st.Directions {
			st.Directions[i].Pending = 0
		}
	}
	results := sess.Results()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sess, s.results = nil, results
	clear(s.offline)
	_, canWait := s.cfg.Remote.(Reauthorizer)
	switch {
	case err != nil && failState(err) == StateUnauthorized && canWait && ctx.Err() == nil:
		s.err, s.state, s.unauth = err, StateUnauthorized, true // waitCredentials
	case err != nil:
		s.want, s.err, s.state = false, err, failState(err)
	case stoppedByUs && s.want:
		s.state = StateOffline // SetOnline(false)
	default:
		s.want, s.state = false, StateStopped
	}
	now := time.Now()
	dirs := st.Directions
	if len(dirs) == 0 {
		dirs = []Status{st}
	}
	final := st
	final.Directions = nil
	final.Stats, final.Updated, final.LastError = Stats{}, now, s.err
	for _, d := range dirs {
		b := s.base[d.Replication]
		b.Add(d.Stats)
		s.base[d.Replication] = b
		ev := Event{Kind: EventState, Status: d, Time: now}
		ev.Updated = now
		switch {
		case d.State == StateError || d.State == StateUnauthorized:
			ev.Err = d.LastError
		case s.state == StateOffline:
			ev.State = StateOffline
		default:
			ev.State = StateStopped
		}
		if errors.Is(ev.LastError, context.Canceled) {
			ev.LastError = nil // stopped, not failed
		}
		d = ev.Status
		d.Stats = Stats{}
		if len(st.Directions) > 0 {
			final.Directions = append(final.Directions, d)
		} else {
			final = d
			final.LastError = s.err
		}
		ev.Stats = b
		s.queueLocked(ev)
	}
	s.final = final
}

// waitCredentials starts, unless it runs, a goroutine waiting for the
// remote's credentials to change; the loop hears from it on credsDone.
func (s *Supervisor) waitCredentials(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.credsCancel != nil {
		return
	}
	wctx, cancel := context.WithCancel(ctx)
	ch := make(chan error, 1)
	s.credsDone, s.credsCancel = ch, cancel
	ra := s.cfg.Remote.(Reauthorizer)
	s.credsWG.Add(1)
	go func() {
		defer s.credsWG.Done()
		ch <- ra.WaitCredentials(wctx)
	}()
}

// credentialsChanged ends the wait for credentials: with nil a new session
// starts; otherwise (fixed credentials) the supervisor stops, unauthorized.
func (s *Supervisor) credentialsChanged(err error) {
	s.stopCredentialsWait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.unauth {
		return
	}
	s.unauth = false
	if err != nil {
		s.want = false // s.err is still the refusal
		return
	}
	s.err = nil
}

// stopCredentialsWait cancels the wait for credentials, if any, and waits
// for its goroutine.
func (s *Supervisor) stopCredentialsWait() {
	s.mu.Lock()
	cancel := s.credsCancel
	s.credsCancel, s.credsDone = nil, nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		s.credsWG.Wait()
	}
}

// onSessionEvent receives the session's events, from its goroutines.
func (s *Supervisor) onSessionEvent(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev.Kind == EventState && ev.State == StateIdle && ev.Replication == "pull" && s.cfg.CaughtUp != nil {
		s.caughtUp = true
		s.nudgeLocked()
	}
	if ev.Kind == EventState {
		switch ev.State {
		case StateStopped, StateError, StateUnauthorized:
			return // the session ended: endSession reports it
		case StateOffline:
			s.offline[ev.Replication] = true
		case StateStarting:
			if s.offline[ev.Replication] {
				return // another attempt while offline, not a recovery
			}
		default:
			s.offline[ev.Replication] = false
		}
	}
	if s.offline[ev.Replication] {
		ev.State = StateOffline
	}
	b := s.base[ev.Replication]
	ev.Stats.Add(b)
	s.queueLocked(ev)
}
