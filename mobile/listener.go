package mobile

import (
	"context"
	"errors"

	"github.com/settee/settee/localdb"
)

// ChangeListener hears about every document change of a Database, local
// writes and replicated ones alike, to refresh a UI. changeJSON is one row
// of the changes feed: {"seq":N,"id":"...","changes":[{"rev":"..."}],
// "deleted":true}. Calls come one at a time, in sequence order, on a
// background thread owned by the Database (never the UI thread); a slow
// listener delays the next calls, not the store.
type ChangeListener interface {
	OnChange(changeJSON string)
}

// AddChangeListener registers l for the changes made from now on and
// returns a token for RemoveChangeListener.
func (d *Database) AddChangeListener(l ChangeListener) (token int64, err error) {
	defer recoverTo(&err)
	if l == nil {
		return 0, badRequest("nil listener")
	}
	if err := d.check(); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, errClosed
	}
	if d.watchCancel == nil {
		info, err := d.db.Info(d.ctx) // the file's head, other writers included
		if err != nil {
			return 0, err
		}
		since := info.UpdateSeq
		ctx, cancel := context.WithCancel(d.ctx)
		d.watchCancel = cancel
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.watch(ctx, since)
		}()
	}
	d.nextToken++
	d.listeners[d.nextToken] = l
	return d.nextToken, nil
}

// RemoveChangeListener unregisters the listener of token; an unknown token
// is ignored. It may be called from inside OnChange.
func (d *Database) RemoveChangeListener(token int64) {
	defer recoverLog("RemoveChangeListener")
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.listeners, token)
	if len(d.listeners) == 0 && d.watchCancel != nil {
		d.watchCancel()
		d.watchCancel = nil
	}
}

// watch follows the store's feed after since (localdb.Follow, which sees
// every writer of the file) and hands each row to the listeners, until
// ctx is done.
func (d *Database) watch(ctx context.Context, since int64) {
	defer recoverLog("change watcher")
	_, err := d.db.Follow(ctx, since, localdb.FollowOptions{Feed: localdb.FeedContinuous}, func(c *localdb.Change) error {
		if ctx.Err() != nil {
			return ctx.Err() // removed listeners hear nothing more
		}
		js, err := marshal(c)
		if err != nil {
			return err
		}
		for _, l := range d.listenerSnapshot() {
			callListener(l, js)
		}
		return nil
	})
	if err != nil && ctx.Err() == nil && !errors.Is(err, localdb.ErrClosed) {
		logf(LevelError, "change watcher: %v", err)
	}
}

func (d *Database) listenerSnapshot() []ChangeListener {
	d.mu.Lock()
	defer d.mu.Unlock()
	ls := make([]ChangeListener, 0, len(d.listeners))
	for _, l := range d.listeners {
		ls = append(ls, l)
	}
	return ls
}

// callListener calls the app's listener; its panic is logged, not fatal.
func callListener(l ChangeListener, js string) {
	defer recoverLog("ChangeListener.OnChange")
	l.OnChange(js)
}
