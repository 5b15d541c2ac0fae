package mobile

import (
	gosync "sync"

	"github.com/settee/settee/localdb"
)

// ChangeListener hears about document changes of a Database, local
// writes and replicated ones alike, to refresh a UI. changeJSON is one row
// of the changes feed: {"seq":N,"id":"...","changes":[{"rev":"..."}],
// "deleted":true}. Calls come one at a time, in sequence order, on a
// background thread owned by the Database (never the UI thread), shared
// by all its listeners; a slow listener delays the next calls, not the
// store.
type ChangeListener interface {
	OnChange(changeJSON string)
}

// ListenerToken is what registering a listener returns: Remove ends the
// registration. Keep it as long as the listener should hear.
type ListenerToken struct {
	once   gosync.Once
	remove func()
}

// Remove unregisters the listener; removing twice is a no-op. It may be
// called from inside the listener; once it returns, the listener is not
// called again (unless a call was already under way on another thread).
func (t *ListenerToken) Remove() {
	defer recoverLog("ListenerToken.Remove")
	if t != nil && t.remove != nil {
		t.once.Do(t.remove)
	}
}

// AddChangeListener registers l for the changes of every document made
// from now on, by this Database or any other connection to the file.
func (d *Database) AddChangeListener(l ChangeListener) (token *ListenerToken, err error) {
	defer recoverTo(&err)
	return d.addListener("", l)
}

// AddDocumentChangeListener registers l for the changes of one document
// made from now on (Couchbase Lite's document change listener).
func (d *Database) AddDocumentChangeListener(docID string, l ChangeListener) (token *ListenerToken, err error) {
	defer recoverTo(&err)
	if docID == "" {
		return nil, badRequest("a document listener needs a document id")
	}
	return d.addListener(docID, l)
}

func (d *Database) addListener(docID string, l ChangeListener) (*ListenerToken, error) {
	if l == nil {
		return nil, badRequest("nil listener")
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	fn := func(c *localdb.Change) {
		js, err := marshal(c)
		if err != nil {
			logf(LevelError, "change listener: %v", err)
			return
		}
		callListener(l, js)
	}
	var lt *localdb.Listener
	var err error
	if docID == "" {
		lt, err = d.db.AddChangeListener(d.ctx, fn)
	} else {
		lt, err = d.db.AddDocumentChangeListener(d.ctx, docID, fn)
	}
	if err != nil {
		return nil, err
	}
	return &ListenerToken{remove: lt.Remove}, nil
}

// RemoveChangeListener is token.Remove().
func (d *Database) RemoveChangeListener(token *ListenerToken) {
	token.Remove()
}

// callListener calls the app's listener; its panic is logged, not fatal.
func callListener(l ChangeListener, js string) {
	defer recoverLog("ChangeListener.OnChange")
	l.OnChange(js)
}
