package query

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"

	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb"
)

// Update is one delivery of a live query: the whole result as of update
// sequence Seq, and how it differs from the previous delivery (the first
// delivery lists every row as added).
type Update struct {
	Seq     int64             `json:"seq"`
	Docs    []json.RawMessage `json:"docs"`
	Changes []RowChange       `json:"changes"`
	Warning string            `json:"warning,omitempty"`
}

// RowChange is one row's change between two deliveries. Kind is "added"
// (Index is its place in Docs), "removed" (OldIndex was its place before),
// "changed" (a new revision, maybe also moved) or "moved" (same revision,
// a new place relative to the other rows).
type RowChange struct {
	Kind     string `json:"kind"`
	ID       string `json:"id"`
	Index    int    `json:"index"`
	OldIndex int    `json:"old_index"`
}

// ObserveOptions tune Observe. None yet: a nil *ObserveOptions is fine.
type ObserveOptions struct{}

// Observe runs a _find query as a live query: fn gets the initial result,
// then one Update after each commit that changes the result, until ctx
// ends (Observe then returns nil) or fn or the query fails. A commit is
// checked against the query at the cost of its changed documents: the
// query runs again only when one of them is in the result or matches the
// selector (or a design document changed). Commits that land while fn
// runs are coalesced into the next Update; nothing is missed, since each
// Update is computed from the store as of its Seq.
func Observe(ctx context.Context, db *localdb.DB, body []byte, opts *ObserveOptions, fn func(*Update) error) error {
	req, err := parseRequest(body)
	if err != nil {
		return err
	}
	o := &observer{db: db, req: req}
	seq, err := o.seq(ctx)
	if err != nil {
		return err
	}
	up, err := o.rerun(ctx, seq)
	if err != nil {
		return err
	}
	if err := fn(up); err != nil {
		return err
	}
	// The store's feed (localdb.Follow) wakes the query on every commit to
	// the file, from this process or another; a wake is a hint, coalesced.
	wake := make(chan struct{}, 1)
	fctx, stop := context.WithCancel(ctx)
	followed := make(chan error, 1)
	go func() {
		_, err := db.Follow(fctx, seq, localdb.FollowOptions{Feed: localdb.FeedContinuous}, func(*localdb.Change) error {
			select {
			case wake <- struct{}{}:
			default:
			}
			return nil
		})
		followed <- err
	}()
	defer func() {
		stop()
		<-followed
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-followed:
			followed <- err // for the deferred wait
			if ctx.Err() != nil {
				return nil
			}
			return err
		case <-wake:
		}
		now, err := o.seq(ctx)
		if err != nil {
			return ignoreCancel(ctx, err)
		}
		if now == seq {
			continue
		}
		relevant, last, err := o.relevant(ctx, seq)
		if err != nil {
			return ignoreCancel(ctx, err)
		}
		seq = max(now, last)
		if !relevant {
			continue
		}
		up, err := o.rerun(ctx, seq)
		if err != nil {
			return ignoreCancel(ctx, err)
		}
		if len(up.Changes) == 0 {
			continue
		}
		if err := fn(up); err != nil {
			return err
		}
	}
}

// ObserveChan is Observe delivering on a channel, closed when the query
// ends; the error channel then gets Observe's result. An unread Update
// holds back the next one, so a slow reader gets coalesced Updates.
func ObserveChan(ctx context.Context, db *localdb.DB, body []byte, opts *ObserveOptions) (<-chan *Update, <-chan error) {
	out := make(chan *Update)
	errc := make(chan error, 1)
	go func() {
		defer close(errc)
		defer close(out)
		errc <- Observe(ctx, db, body, opts, func(u *Update) error {
			select {
			case out <- u:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	return out, errc
}

func ignoreCancel(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// observer holds a live query's last result.
type observer struct {
	db   *localdb.DB
	req  *request
	rows []liveRow
	in   map[string]bool // ids in rows
}

type liveRow struct {
	id, rev string
}

// seq reads the store file's update sequence (commits of every process).
func (o *observer) seq(ctx context.Context) (int64, error) {
	info, err := o.db.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.UpdateSeq, nil
}

// relevant reads the changes after since and reports whether one of them
// can change the result.
func (o *observer) relevant(ctx context.Context, since int64) (bool, int64, error) {
	found := false
	last, err := o.db.Changes(ctx, localdb.ChangesOptions{Since: since, IncludeDocs: true}, func(c *localdb.Change) error {
		if found {
			return nil
		}
		switch {
		case o.in[c.ID], mango.IsDesignID(c.ID):
			found = true
		case c.Deleted || c.Doc == nil:
		default:
			doc, err := mango.DecodeDoc(c.Doc.ID, c.Doc.Rev, c.Doc.Body, nil)
			found = err == nil && o.req.selector.Match(doc) && hasFields(doc, o.req.sort)
		}
		return nil
	})
	return found, last, err
}

// rerun runs the query and diffs it with the last result.
func (o *observer) rerun(ctx context.Context, seq int64) (*Update, error) {
	up := &Update{Seq: seq, Docs: []json.RawMessage{}, Changes: []RowChange{}}
	var rows []liveRow
	res, err := run(ctx, o.db, o.req, nil, func(row *localdb.IndexRow, out json.RawMessage) error {
		rows = append(rows, liveRow{row.Doc.ID, row.Doc.Rev})
		up.Docs = append(up.Docs, bytes.Clone(out))
		return nil
	})
	if err != nil {
		return nil, err
	}
	up.Warning = res.Warning
	up.Changes = diffRows(o.rows, rows)
	o.rows = rows
	o.in = make(map[string]bool, len(rows))
	for _, r := range rows {
		o.in[r.id] = true
	}
	return up, nil
}

// diffRows lists what changed from old to cur. A row with a new revision
// is "changed" wherever it went; an unchanged row is "moved" when its
// order relative to the other unchanged rows changed (all but a longest
// run of them that kept their order).
func diffRows(old, cur []liveRow) []RowChange {
	changes := []RowChange{}
	oldAt := make(map[string]int, len(old))
	for i, r := range old {
		oldAt[r.id] = i
	}
	curAt := make(map[string]int, len(cur))
	for i, r := range cur {
		curAt[r.id] = i
	}
	for i, r := range old {
		if _, ok := curAt[r.id]; !ok {
			changes = append(changes, RowChange{Kind: "removed", ID: r.id, Index: -1, OldIndex: i})
		}
	}
	var common []int // positions in cur of unchanged rows also in old
	for i, r := range cur {
		if j, ok := oldAt[r.id]; ok && old[j].rev == r.rev {
			common = append(common, i)
		}
	}
	stay := longestIncreasing(common, func(i int) int { return oldAt[cur[i].id] })
	for i, r := range cur {
		j, ok := oldAt[r.id]
		switch {
		case !ok:
			changes = append(changes, RowChange{Kind: "added", ID: r.id, Index: i, OldIndex: -1})
		case old[j].rev != r.rev:
			changes = append(changes, RowChange{Kind: "changed", ID: r.id, Index: i, OldIndex: j})
		case !stay[i]:
			changes = append(changes, RowChange{Kind: "moved", ID: r.id, Index: i, OldIndex: j})
		}
	}
	return changes
}

// longestIncreasing returns the members of a longest subsequence of idx
// whose key increases.
func longestIncreasing(idx []int, key func(int) int) map[int]bool {
	var tails []int // tails[k]: position in idx ending the best run of length k+1
	prev := make([]int, len(idx))
	for p, i := range idx {
		k := sort.Search(len(tails), func(k int) bool { return key(idx[tails[k]]) >= key(i) })
		if k > 0 {
			prev[p] = tails[k-1]
		} else {
			prev[p] = -1
		}
		if k == len(tails) {
			tails = append(tails, p)
		} else {
			tails[k] = p
		}
	}
	keep := map[int]bool{}
	if len(tails) == 0 {
		return keep
	}
	for p := tails[len(tails)-1]; p >= 0; p = prev[p] {
		keep[idx[p]] = true
	}
	return keep
}
