package localdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/settee/settee/couchdoc"
)

// loadChunk is how many documents' rows one query of OpenRevsBatch reads.
const loadChunk = 64

// batchBytes bounds the bodies and inline attachment bytes OpenRevsBatch
// holds at once: past it, the documents read so far are handed over and
// the next ones read in a new transaction. A variable for tests.
var batchBytes = 4 << 20

// batchAnswer is one answer of OpenRevsBatch, held until handed to fn.
type batchAnswer struct {
	id  string
	r   OpenRev
	err error
}

// OpenRevsBatch answers many OpenRevs requests, reading their documents a
// group at a time, each group in one read transaction (one snapshot), the
// rows and bodies of up to 64 documents per query, instead of a transaction
// and a few queries per document. It is what a replication reading this
// store (_bulk_get) uses.
//
// fn is called with the request's ID for each answer OpenRevs would give
// (same options, same order), requests in order. A request's AttsSince,
// when not nil, replaces opts.AttsSince for it. A per-document failure does
// not stop the batch: fn gets it as err with a zero OpenRev, once for the
// request — ErrNotFound when a document that does not exist is asked with
// nil Revs, ErrBadRequest for a malformed rev. Only a store error (I/O,
// ErrClosed, ctx done) or fn's own error ends the call, and is returned.
//
// fn runs outside any transaction, so it may take its time and call the
// store. Groups end at about 4 MiB of bodies and inline attachments (plus
// the bodies of at most 64 documents read ahead), so memory stays bounded;
// two requests may see different snapshots only if they fall in different
// groups. Large attachments are Bodies opened
// lazily, as with OpenRevs: fn must close them (those of answers not
// handed over because the call ended are closed here).
func (db *DB) OpenRevsBatch(ctx context.Context, reqs []RevsRequest, opts GetOptions, fn func(id string, r OpenRev, err error) error) error {
	var group []batchAnswer
	for next := 0; next < len(reqs); {
		group = group[:0]
		err := db.readTx(ctx, func(tx *sql.Tx) error {
			var err error
			group, next, err = db.newRtx(ctx, tx).readGroup(reqs, next, opts, group)
			return err
		})
		if err != nil {
			closeAnswers(group)
			return err
		}
		for i, a := range group {
			if err := fn(a.id, a.r, a.err); err != nil {
				closeAnswers(group[i+1:])
				return err
			}
		}
	}
	return nil
}

// readGroup reads the answers of reqs[next:] into group until the byte
// bound is reached; it returns the group and the first request not read.
func (r *rtx) readGroup(reqs []RevsRequest, next int, opts GetOptions, group []batchAnswer) ([]batchAnswer, int, error) {
	var rows map[string]*docState
	loadedTo := next
	size := 0
	for next < len(reqs) && size < batchBytes {
		if next >= loadedTo {
			end := min(next+loadChunk, len(reqs))
			var err error
			if rows, err = r.loadRows(reqs[next:end]); err != nil {
				return group, next, err
			}
			if err := r.readBodies(reqs[next:end], rows, opts); err != nil {
				return group, next, err
			}
			loadedTo = end
		}
		req := reqs[next]
		next++
		parsed, err := parseRevs(req.Revs)
		if err != nil {
			group = append(group, batchAnswer{id: req.ID, err: err})
			continue
		}
		o := opts
		if req.AttsSince != nil {
			o.AttsSince = req.AttsSince
		}
		res, err := r.openRevs(req.ID, rows[req.ID], req.Revs, parsed, o)
		if errors.Is(err, couchdoc.ErrNotFound) {
			group = append(group, batchAnswer{id: req.ID, err: err})
			continue
		}
		if err != nil {
			return group, next, err
		}
		for _, a := range res {
			group = append(group, batchAnswer{id: req.ID, r: a})
			size += answerSize(a)
		}
	}
	return group, next, nil
}

// loadRows reads the rows of the requests' documents, keyed by id (absent:
// not stored).
func (r *rtx) loadRows(reqs []RevsRequest) (map[string]*docState, error) {
	args := make([]any, loadChunk)
	for i := range args {
		args[i] = reqs[min(i, len(reqs)-1)].ID
	}
	rows, err := r.stmt(rLoadRows).QueryContext(r.ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("read docs: %w", err)
	}
	defer rows.Close()
	out := make(map[string]*docState, len(reqs))
	for rows.Next() {
		st := &docState{}
		var tree []byte
		if err := rows.Scan(&st.id, &st.docID, &st.seq, &tree); err != nil {
			return nil, fmt.Errorf("read docs: %w", err)
		}
		if err := st.setTree(tree); err != nil {
			return nil, err
		}
		out[st.id] = st
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read docs: %w", err)
	}
	return out, nil
}

// bodyKey names a stored revision body.
type bodyKey struct {
	docID int64
	rev   string
}

// bodyRow is a revs row read ahead.
type bodyRow struct {
	revRow  int64
	body    []byte
	hasAtts bool
}

// readBodies reads ahead the bodies the requests will answer with, up to
// loadChunk per query, into r.bodies (replacing those of earlier requests).
func (r *rtx) readBodies(reqs []RevsRequest, rows map[string]*docState, opts GetOptions) error {
	r.bodies = make(map[bodyKey]*bodyRow, len(reqs))
	var keys []bodyKey
	for _, q := range reqs {
		st := rows[q.ID]
		if st == nil {
			continue
		}
		parsed, err := parseRevs(q.Revs)
		if err != nil {
			continue // answered as an error
		}
		picks, err := pickRevs(st, q.Revs, parsed, opts)
		if err != nil {
			continue
		}
		for _, p := range picks {
			if p.node < 0 {
				continue
			}
			k := bodyKey{st.docID, st.tree.Nodes[p.node].Rev.String()}
			if _, ok := r.bodies[k]; !ok {
				r.bodies[k] = nil
				keys = append(keys, k)
			}
		}
	}
	args := make([]any, 2*loadChunk)
	for len(keys) > 0 {
		n := min(len(keys), loadChunk)
		for i := range loadChunk {
			if i < n {
				args[2*i], args[2*i+1] = keys[i].docID, keys[i].rev
			} else {
				args[2*i], args[2*i+1] = int64(0), "" // matches nothing
			}
		}
		if err := r.queryBodies(args); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

func (r *rtx) queryBodies(args []any) error {
	rows, err := r.stmt(rBodies).QueryContext(r.ctx, args...)
	if err != nil {
		return fmt.Errorf("read bodies: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k bodyKey
		b := &bodyRow{}
		if err := rows.Scan(&k.docID, &k.rev, &b.revRow, &b.body, &b.hasAtts); err != nil {
			return fmt.Errorf("read bodies: %w", err)
		}
		r.bodies[k] = b
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read bodies: %w", err)
	}
	return nil
}

// answerSize is what an answer holds in memory, roughly.
func answerSize(a OpenRev) int {
	if a.Doc == nil {
		return len(a.Missing)
	}
	n := len(a.Doc.ID) + len(a.Doc.Body)
	for _, att := range a.Doc.Attachments {
		n += len(att.Data)
	}
	return n
}

func closeAnswers(group []batchAnswer) {
	for _, a := range group {
		if a.r.Doc == nil {
			continue
		}
		for _, att := range a.r.Doc.Attachments {
			if c, ok := att.Body.(io.Closer); ok {
				_ = c.Close()
			}
		}
	}
}
