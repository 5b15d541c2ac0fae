package localdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/revtree"
)

// changesPage is how many feed rows are read per query.
const changesPage = 256

// broadcast wakes everything waiting for a change.
func (db *DB) broadcast() {
	db.nmu.Lock()
	close(db.notify)
	db.notify = make(chan struct{})
	db.nmu.Unlock()
}

func (db *DB) isClosing() bool {
	db.lmu.Lock()
	defer db.lmu.Unlock()
	return db.closed
}

// feedRow is one docs row joined with its winner's body.
type feedRow struct {
	docID   int64
	id      string
	seq     int64
	winner  string
	deleted bool
	// conflicted: the winner has live conflicts.
	conflicted bool
	tree       []byte
	body       []byte
	hasAtts    bool
	revRow     sql.NullInt64
}

// rFeedPage and rFeedPageDesc read a page of the changes feed, after (or,
// descending, before) a sequence.
const (
	rFeedPage     = "SELECT " + feedCols + " WHERE d.seq > ? AND ? >= 0 ORDER BY d.seq LIMIT ?"
	rFeedPageDesc = "SELECT " + feedCols + " WHERE d.seq < ? AND d.seq > ? ORDER BY d.seq DESC LIMIT ?"
)

const feedCols = `d.doc_id, d.id, d.seq, d.winner, d.deleted, d.conflicted, d.tree, r.body, COALESCE(r.has_atts, 0), r.rev_row
	FROM docs d LEFT JOIN revs r ON r.doc_id = d.doc_id AND r.rev = d.winner`

// Changes streams the changes feed after opts.Since to fn, page by page
// (the feed is never held whole in memory), and returns the last sequence:
// that of the last row given to fn when a limit cut the feed, else the
// update sequence the scan reached. Each document appears once, at its
// latest sequence. An error from fn stops the feed and is returned as is.
func (db *DB) Changes(ctx context.Context, opts ChangesOptions, fn func(*Change) error) (int64, error) {
	if err := db.enter(); err != nil {
		return 0, err
	}
	defer db.leave()
	start := db.updateSeq.Load()
	last := opts.Since
	if opts.Descending {
		last = 0
	}
	sent := 0
	emit := func(r *feedRow) (bool, error) {
		c, err := db.feedChange(ctx, r, opts)
		if err != nil {
			return false, err
		}
		if !opts.Descending || sent == 0 || r.seq < last {
			last = r.seq
		}
		if c == nil {
			return false, nil
		}
		if err := fn(c); err != nil {
			return false, err
		}
		sent++
		return opts.Limit > 0 && sent >= opts.Limit, nil
	}
	if len(opts.DocIDs) > 0 {
		rows, err := db.docIDRows(ctx, opts)
		if err != nil {
			return 0, err
		}
		for _, r := range rows {
			stop, err := emit(r)
			if err != nil {
				return 0, err
			}
			if stop {
				return last, nil
			}
		}
		if !opts.Descending && start > last {
			last = start
		}
		return last, nil
	}
	cursor := opts.Since
	if opts.Descending {
		cursor = 1 << 62
	}
	for {
		q := rFeedPage
		if opts.Descending {
			q = rFeedPageDesc
		}
		lower := int64(0)
		if opts.Descending {
			lower = opts.Since
		}
		page, err := db.feedPage(ctx, q, cursor, lower, changesPage)
		if err != nil {
			return 0, err
		}
		for _, r := range page {
			cursor = r.seq
			stop, err := emit(r)
			if err != nil {
				return 0, err
			}
			if stop {
				return last, nil
			}
		}
		if len(page) < changesPage {
			break
		}
	}
	if !opts.Descending && start > last {
		last = start
	}
	return last, nil
}

func (db *DB) feedPage(ctx context.Context, q string, args ...any) ([]*feedRow, error) {
	var rows *sql.Rows
	var err error
	if s := db.reads.stmts[q]; s != nil {
		// The feed's own pages, prepared once at Open: a continuous feed
		// reads one after every commit.
		rows, err = s.QueryContext(ctx, args...)
	} else {
		rows, err = db.reads.conns.QueryContext(ctx, q, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	defer rows.Close()
	var page []*feedRow
	for rows.Next() {
		r := &feedRow{}
		if err := rows.Scan(&r.docID, &r.id, &r.seq, &r.winner, &r.deleted, &r.conflicted, &r.tree, &r.body, &r.hasAtts, &r.revRow); err != nil {
			return nil, fmt.Errorf("changes: %w", err)
		}
		page = append(page, r)
	}
	return page, rows.Err()
}

// docIDRows reads the feed rows of the listed documents, in feed order.
// The result is bounded by the number of ids asked for.
func (db *DB) docIDRows(ctx context.Context, opts ChangesOptions) ([]*feedRow, error) {
	var all []*feedRow
	ids := opts.DocIDs
	for len(ids) > 0 {
		n := min(500, len(ids))
		args := make([]any, 0, n+1)
		args = append(args, opts.Since)
		for _, id := range ids[:n] {
			args = append(args, id)
		}
		page, err := db.feedPage(ctx, "SELECT "+feedCols+" WHERE d.seq > ? AND d.id IN (?"+strings.Repeat(",?", n-1)+")", args...)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		ids = ids[n:]
	}
	seen := make(map[int64]bool, len(all))
	out := all[:0]
	for _, r := range all {
		if !seen[r.seq] {
			seen[r.seq] = true
			out = append(out, r)
		}
	}
	sortRows(out, opts.Descending)
	return out, nil
}

func sortRows(rows []*feedRow, desc bool) {
	for i := 1; i < len(rows); i++ {
		for j := i; j > 0 && (rows[j].seq < rows[j-1].seq) != desc; j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
}

// feedChange turns a row into a Change, or nil when the filter drops it.
func (db *DB) feedChange(ctx context.Context, r *feedRow, opts ChangesOptions) (*Change, error) {
	c := &Change{Seq: r.seq, ID: r.id, Deleted: r.deleted, Revs: []string{r.winner}}
	// The winner is in the row; the tree is only decoded for the other
	// leaves.
	var t *revtree.Tree
	var leaves []int
	if opts.AllDocs || (opts.IncludeDocs && opts.Conflicts && r.conflicted) {
		var err error
		if t, err = revtree.Unmarshal(r.tree); err != nil {
			return nil, fmt.Errorf("doc %q: %w", r.id, err)
		}
		leaves = t.Leaves()
	}
	if opts.AllDocs {
		for _, l := range leaves[1:] {
			c.Revs = append(c.Revs, t.Nodes[l].Rev.String())
		}
	}
	if !opts.IncludeDocs && opts.Filter == nil {
		return c, nil
	}
	doc := &couchdoc.Doc{ID: r.id, Rev: r.winner, Deleted: r.deleted, Body: r.body}
	if r.hasAtts && r.revRow.Valid {
		err := db.readTxIn(ctx, func(tx *sql.Tx) error {
			return db.newRtx(ctx, tx).fillAtts(doc, r.revRow.Int64, nil, -1, GetOptions{})
		})
		if err != nil {
			return nil, err
		}
	}
	if opts.Filter != nil {
		ok, err := db.filterLeaves(ctx, c, doc, opts)
		if err != nil || !ok {
			return nil, err
		}
	}
	if opts.IncludeDocs {
		if opts.Conflicts && t != nil {
			for _, l := range leaves[1:] {
				if !t.Nodes[l].Deleted {
					doc.Conflicts = append(doc.Conflicts, t.Nodes[l].Rev.String())
				}
			}
		}
		c.Doc = doc
	}
	return c, nil
}

// filterLeaves runs the feed's filter on a change: on the winner, and
// with style=all_docs on every leaf, as CouchDB does, keeping in c.Revs
// the leaves that pass. It reports whether any passed.
func (db *DB) filterLeaves(ctx context.Context, c *Change, winner *couchdoc.Doc, opts ChangesOptions) (bool, error) {
	pass := opts.Filter(winner)
	if !opts.AllDocs || len(c.Revs) < 2 {
		return pass, nil
	}
	revs := make([]string, 0, len(c.Revs))
	if pass {
		revs = append(revs, c.Revs[0])
	}
	for _, rev := range c.Revs[1:] {
		leaf, err := db.Get(ctx, c.ID, GetOptions{Rev: rev})
		if err != nil {
			return false, fmt.Errorf("changes: leaf %s of %q: %w", rev, c.ID, err)
		}
		if opts.Filter(leaf) {
			revs = append(revs, rev)
		}
	}
	c.Revs = revs
	return len(revs) > 0, nil
}
