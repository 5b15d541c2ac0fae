package localdb

import (
	"context"
	"errors"
	gosync "sync"
	"sync/atomic"
)

// Listener is one registration of AddChangeListener or
// AddDocumentChangeListener; Remove ends it.
type Listener struct {
	db      *DB
	docID   string // "" hears every document
	fn      func(*Change)
	removed atomic.Bool
}

// listeners fans one changes feed out to the registered listeners: one
// goroutine follows the store while at least one listener exists.
type listeners struct {
	mu     gosync.Mutex
	all    map[*Listener]struct{}
	byDoc  map[string]map[*Listener]struct{}
	cancel context.CancelFunc // the follower's, while it runs
	done   chan struct{}      // closed when the follower ends
}

// AddChangeListener calls fn with each change committed from now on to
// any document, by this DB or by another connection to the file (as
// Follow sees them). Calls come one at a time, in sequence order, on a
// goroutine the DB owns, shared by all its listeners: a slow fn delays
// the others, never a writer. fn may call Remove (its own or another's)
// and read the store; after Remove returns, fn is not called again unless
// it was already running. The goroutine ends with the last listener or
// Close.
func (db *DB) AddChangeListener(ctx context.Context, fn func(*Change)) (*Listener, error) {
	return db.addListener(ctx, "", fn)
}

// AddDocumentChangeListener is AddChangeListener for the changes of one
// document.
func (db *DB) AddDocumentChangeListener(ctx context.Context, docID string, fn func(*Change)) (*Listener, error) {
	if docID == "" {
		return nil, errors.New("localdb: a document listener needs a document id")
	}
	return db.addListener(ctx, docID, fn)
}

func (db *DB) addListener(ctx context.Context, docID string, fn func(*Change)) (*Listener, error) {
	if fn == nil {
		return nil, errors.New("localdb: nil listener")
	}
	l := &Listener{db: db, docID: docID, fn: fn}
	h := &db.listen
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cancel == nil {
		// Start at the file's head (other writers' commits included), so
		// the listener hears only what comes after.
		info, err := db.Info(ctx)
		if err != nil {
			return nil, err
		}
		if err := db.startFollower(info.UpdateSeq); err != nil {
			return nil, err
		}
	}
	if docID == "" {
		if h.all == nil {
			h.all = map[*Listener]struct{}{}
		}
		h.all[l] = struct{}{}
	} else {
		if h.byDoc == nil {
			h.byDoc = map[string]map[*Listener]struct{}{}
		}
		if h.byDoc[docID] == nil {
			h.byDoc[docID] = map[*Listener]struct{}{}
		}
		h.byDoc[docID][l] = struct{}{}
	}
	return l, nil
}

// startFollower starts the goroutine that hands the changes after since
// to the listeners. Callers hold h.mu.
func (db *DB) startFollower(since int64) error {
	h := &db.listen
	db.lmu.Lock()
	if db.closed {
		db.lmu.Unlock()
		return ErrClosed
	}
	db.subs.Add(1) // Close waits for the follower
	db.lmu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	prev, done := h.done, make(chan struct{})
	h.cancel, h.done = cancel, done
	go func() {
		defer db.subs.Done()
		defer close(done)
		if prev != nil {
			<-prev // the previous follower's last call has returned
		}
		_, _ = db.Follow(ctx, since, FollowOptions{Feed: FeedContinuous}, func(c *Change) error {
			for _, l := range h.snapshot(c.ID) {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if !l.removed.Load() {
					l.fn(c)
				}
			}
			return nil
		})
		// It ends when the last listener goes (ctx), when the DB closes
		// (ErrClosed) or on a read error, after which the listeners hear
		// nothing more: a new listener starts a new follower.
		h.mu.Lock()
		if h.done == done {
			h.cancel = nil
			h.all, h.byDoc = nil, nil
		}
		h.mu.Unlock()
		cancel()
	}()
	return nil
}

// snapshot returns the listeners of a change of document id.
func (h *listeners) snapshot(id string) []*Listener {
	h.mu.Lock()
	defer h.mu.Unlock()
	ls := make([]*Listener, 0, len(h.all)+len(h.byDoc[id]))
	for l := range h.all {
		ls = append(ls, l)
	}
	for l := range h.byDoc[id] {
		ls = append(ls, l)
	}
	return ls
}

// Remove ends the registration; removing twice is a no-op. It may be
// called from inside a listener.
func (l *Listener) Remove() {
	if l == nil || l.removed.Swap(true) {
		return
	}
	h := &l.db.listen
	h.mu.Lock()
	defer h.mu.Unlock()
	if l.docID == "" {
		delete(h.all, l)
	} else if m := h.byDoc[l.docID]; m != nil {
		delete(m, l)
		if len(m) == 0 {
			delete(h.byDoc, l.docID)
		}
	}
	if len(h.all) == 0 && len(h.byDoc) == 0 && h.cancel != nil {
		h.cancel()
		h.cancel = nil
	}
}
