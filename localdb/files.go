package localdb

import (
	"path/filepath"
	gosync "sync"
	"sync/atomic"

	"github.com/fsnotify/fsnotify"
)

// fileSet is the process's open stores, by file: a commit through one DB
// wakes the feeds of the others on the same file, and one fsnotify
// watcher (one inotify instance or kqueue, whatever the number of files)
// watches the write-ahead logs of the files whose feeds wait.
//
// Calls into the watcher (Add, Remove, Close) are made under wmu only:
// the watcher's reader may be blocked handing an event to dispatch, which
// takes mu.
type fileSet struct {
	wmu   gosync.Mutex                // serialises the calls into w; taken before mu
	mu    gosync.Mutex                // guards the fields below
	open  map[string]map[*DB]struct{} // file key -> the DBs open on it
	w     *fsnotify.Watcher           // nil until a feed waits, and once no DB is open
	refs  map[string]int              // file key -> watchers holding its log's watch
	gone  map[string]bool             // file key -> its log was removed under the watch
	wals  map[string]string           // log path (as watched) -> file key
	wdone chan struct{}               // closed when w's dispatch goroutine ends
}

// notifyBroken makes every new file watch fail (tests of the fallback).
var notifyBroken atomic.Bool

var files = fileSet{open: map[string]map[*DB]struct{}{}, refs: map[string]int{}, gone: map[string]bool{}, wals: map[string]string{}}

// fileKey names the file path points to, the same for every path to it
// (relative, through symbolic links), as SQLite resolves it.
func fileKey(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p
	}
	if p, err := filepath.Abs(path); err == nil {
		path = p
	}
	return path
}

func (s *fileSet) add(db *DB) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.open[db.key]
	if m == nil {
		m = map[*DB]struct{}{}
		s.open[db.key] = m
	}
	m[db] = struct{}{}
}

// remove forgets a closing DB; the watcher goes with the last DB.
func (s *fileSet) remove(db *DB) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	delete(s.open[db.key], db)
	if len(s.open[db.key]) == 0 {
		delete(s.open, db.key)
		delete(s.gone, db.key)
	}
	w, done := s.w, s.wdone
	if len(s.open) > 0 || w == nil {
		s.mu.Unlock()
		return
	}
	s.w = nil
	clear(s.wals)
	clear(s.refs)
	s.mu.Unlock()
	_ = w.Close()
	<-done
}

// noteSiblings wakes the feeds of the other DBs open on db's file.
func (s *fileSet) noteSiblings(db *DB, seq int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for o := range s.open[db.key] {
		if o != db {
			o.noteSeq(seq)
		}
	}
}

// watchWAL has file events on db's log wake db's watcher, until
// unwatchWAL. An error means no notification: the caller polls.
func (s *fileSet) watchWAL(db *DB) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	if s.gone[db.key] || notifyBroken.Load() {
		s.mu.Unlock()
		return fsnotify.ErrNonExistentWatch
	}
	if s.refs[db.key] > 0 {
		s.refs[db.key]++
		s.mu.Unlock()
		return nil
	}
	w := s.w
	s.mu.Unlock()
	if w == nil {
		var err error
		if w, err = fsnotify.NewWatcher(); err != nil {
			return err
		}
		done := make(chan struct{})
		go s.dispatch(w, done)
		s.mu.Lock()
		s.w, s.wdone = w, done
		s.mu.Unlock()
	}
	// An event before the maps name the log is lost; the caller checks
	// once the watch is set.
	wal := db.key + "-wal"
	if err := w.Add(wal); err != nil {
		return err
	}
	s.mu.Lock()
	s.wals[wal] = db.key
	s.refs[db.key] = 1
	s.mu.Unlock()
	return nil
}

func (s *fileSet) unwatchWAL(db *DB) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	if s.refs[db.key] == 0 {
		s.mu.Unlock()
		return // the watcher was closed, or the log was removed
	}
	if s.refs[db.key]--; s.refs[db.key] > 0 {
		s.mu.Unlock()
		return
	}
	delete(s.refs, db.key)
	wal := db.key + "-wal"
	delete(s.wals, wal)
	w := s.w
	s.mu.Unlock()
	if w != nil {
		_ = w.Remove(wal)
	}
}

// lost reports that db's log was removed under its watch.
func (s *fileSet) lost(db *DB) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone[db.key]
}

// dispatch wakes the watchers of the DBs whose log an event names. An
// error (the kernel's queue overflowed) may hide events: it wakes every
// watcher.
func (s *fileSet) dispatch(w *fsnotify.Watcher, done chan struct{}) {
	defer close(done)
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				// A connection opening the log sets its owner: no commit.
				continue
			}
			s.mu.Lock()
			if key, ok := s.wals[ev.Name]; ok {
				if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
					s.gone[key] = true
					delete(s.wals, ev.Name)
					delete(s.refs, key)
				}
				for db := range s.open[key] {
					db.wakeWatcher()
				}
			}
			s.mu.Unlock()
		case _, ok := <-w.Errors:
			if !ok {
				return
			}
			s.mu.Lock()
			for key := range s.refs {
				for db := range s.open[key] {
					db.wakeWatcher()
				}
			}
			s.mu.Unlock()
		}
	}
}
