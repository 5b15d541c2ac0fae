package mobile

import (
	"context"
	"errors"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/query"
)

// QueryListener hears a live query's results. OnResult gets the whole
// result and what changed since the previous call, as JSON:
// {"seq":N,"docs":[...],"changes":[{"kind":"added"|"removed"|"changed"|
// "moved","id":"...","index":N,"old_index":N}]}; the first call lists every
// row as added. OnError gets the error that ended the query. Calls come one
// at a time on a background thread owned by the Database; commits made
// while one runs are coalesced into the next call.
type QueryListener interface {
	OnResult(updateJSON string)
	OnError(message string)
}

// Observe runs a Find query (queryJSON as for Find) as a live query: l gets
// the initial result, then an update after each commit that changes the
// result, local or replicated, and within a second for commits by other
// processes. Its token's Remove ends the live query. A bad query is an
// error here; later errors go to l.OnError.
func (d *Database) Observe(queryJSON string, l QueryListener) (token *ListenerToken, err error) {
	defer recoverTo(&err)
	if l == nil {
		return nil, badRequest("nil listener")
	}
	if err := d.check(); err != nil {
		return nil, err
	}
	// Validate now, so a bad query fails the call rather than the listener.
	if _, err := query.Explain(d.ctx, d.db, "", []byte(queryJSON)); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errClosed
	}
	ctx, cancel := context.WithCancel(d.ctx)
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer recoverLog("live query")
		err := query.Observe(ctx, d.db, []byte(queryJSON), nil, func(u *query.Update) error {
			js, err := marshal(u)
			if err != nil {
				return err
			}
			callQueryListener(func() { l.OnResult(js) })
			return nil
		})
		if err != nil && ctx.Err() == nil && !errors.Is(err, localdb.ErrClosed) {
			callQueryListener(func() { l.OnError(err.Error()) })
		}
	}()
	return &ListenerToken{remove: cancel}, nil
}

// StopObserving is token.Remove(): it ends the live query. It may be
// called from inside the listener.
func (d *Database) StopObserving(token *ListenerToken) {
	token.Remove()
}

// callQueryListener calls the app; its panic is logged, not fatal.
func callQueryListener(call func()) {
	defer recoverLog("QueryListener")
	call()
}
