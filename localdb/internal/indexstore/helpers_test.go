package indexstore_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb/internal/indexstore"
	"github.com/settee/settee/localdb/localdbtest"
)

// writeTx is a write transaction as package localdb's drives the index
// part (indexstore.Tx): Exec and QueryRow flush the buffered entries
// first, and the transaction's Flush is the Writer's.
type writeTx struct {
	ctx      context.Context
	tx       *sql.Tx
	iw       *indexstore.Writer
	stmts    map[string]*sql.Stmt
	docDelta int64
	flushErr error // of a flush before a QueryRow
}

var _ indexstore.Tx = (*writeTx)(nil)

func (w *writeTx) Context() context.Context { return w.ctx }
func (w *writeTx) SQL() *sql.Tx             { return w.tx }
func (w *writeTx) DocDelta() int64          { return w.docDelta }
func (w *writeTx) Flush() error             { return w.iw.Flush() }

func (w *writeTx) Exec(query string, args ...any) (sql.Result, error) {
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return w.tx.ExecContext(w.ctx, query, args...)
}

func (w *writeTx) QueryRow(query string, args ...any) *sql.Row {
	if err := w.Flush(); err != nil && w.flushErr == nil {
		w.flushErr = err // a *sql.Row cannot carry it: update returns it
	}
	return w.tx.QueryRowContext(w.ctx, query, args...)
}

func (w *writeTx) Bind(query string) (*sql.Stmt, error) {
	if s, ok := w.stmts[query]; ok {
		return s, nil
	}
	s, err := w.tx.PrepareContext(w.ctx, query)
	if err != nil {
		return nil, err
	}
	w.stmts[query] = s
	return s, nil
}

// ixStore is a store file and one handle's index cache.
type ixStore struct {
	db    *sql.DB
	cache indexstore.Cache
}

func openStore(t *testing.T) *ixStore {
	t.Helper()
	return &ixStore{db: localdbtest.SQLFile(t)}
}

// update runs fn in one write transaction with an index Writer, and
// commits it as localdb does: flush, BeforeCommit, the document count,
// commit, AfterCommit.
func (s *ixStore) update(t *testing.T, fn func(w *writeTx) error) error {
	t.Helper()
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &writeTx{ctx: ctx, tx: tx, iw: &indexstore.Writer{}, stmts: map[string]*sql.Stmt{}}
	err = w.iw.Begin(w, &s.cache)
	if err == nil {
		err = fn(w)
	}
	if err == nil {
		err = w.flushErr
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = w.iw.BeforeCommit()
	}
	if err == nil {
		_, err = tx.Exec("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'doc_count'", w.docDelta)
	}
	if err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	w.iw.AfterCommit()
	return nil
}

// mustUpdate is update that fails the test on an error.
func (s *ixStore) mustUpdate(t *testing.T, fn func(w *writeTx) error) {
	t.Helper()
	if err := s.update(t, fn); err != nil {
		t.Fatal(err)
	}
}

// put writes body ("": a deletion) as the new winner of document id, in
// the order localdb's document writer calls the Writer: Unindex with the
// old winner still stored, the rows, then Reindex.
func (w *writeTx) put(id, body string) error {
	var docID int64
	var oldWin string
	var deleted bool
	err := w.QueryRow("SELECT doc_id, winner, deleted FROM docs WHERE id = ?", id).Scan(&docID, &oldWin, &deleted)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	gen := 1
	if oldWin != "" {
		fmt.Sscanf(oldWin, "%d-", &gen)
		gen++
	}
	c := indexstore.Change{ID: id, Stored: docID != 0, OldWin: oldWin, OldLive: docID != 0 && !deleted,
		NewWin: fmt.Sprintf("%d-%x", gen, len(body)), NewDeleted: body == ""}
	bodyOf := func(rev string) ([]byte, int64, error) {
		var b []byte
		var row int64
		err := w.QueryRow("SELECT body, rev_row FROM revs WHERE doc_id = ? AND rev = ?", docID, rev).Scan(&b, &row)
		return b, row, err
	}
	if err := w.iw.Unindex(c, bodyOf); err != nil {
		return err
	}
	var seq int64
	if err := w.QueryRow("SELECT COALESCE(MAX(seq), 0) + 1 FROM docs").Scan(&seq); err != nil {
		return err
	}
	if docID == 0 {
		res, err := w.Exec("INSERT INTO docs (id, seq, winner, deleted, conflicted, tree) VALUES (?, ?, ?, ?, 0, x'')", id, seq, c.NewWin, c.NewDeleted)
		if err != nil {
			return err
		}
		if docID, err = res.LastInsertId(); err != nil {
			return err
		}
	} else if _, err := w.Exec("UPDATE docs SET seq = ?, winner = ?, deleted = ? WHERE doc_id = ?", seq, c.NewWin, c.NewDeleted, docID); err != nil {
		return err
	}
	if body == "" {
		body = "{}"
	}
	if _, err := w.Exec("INSERT INTO revs (doc_id, rev, body) VALUES (?, ?, ?)", docID, c.NewWin, body); err != nil {
		return err
	}
	if c.OldLive && c.NewDeleted {
		w.docDelta--
	} else if !c.OldLive && !c.NewDeleted {
		w.docDelta++
	}
	return w.iw.Reindex(c, bodyOf)
}

// putAll writes each id's body in turn in one transaction.
func (s *ixStore) putAll(t *testing.T, idBody ...string) {
	t.Helper()
	s.mustUpdate(t, func(w *writeTx) error {
		for i := 0; i < len(idBody); i += 2 {
			if err := w.put(idBody[i], idBody[i+1]); err != nil {
				return fmt.Errorf("put %s: %w", idBody[i], err)
			}
		}
		return nil
	})
}

// designBody is a design document with a json index (a query view) on
// each of fields, named by-<field>, as CouchDB 3 stores one.
func designBody(fields ...string) string {
	views := map[string]any{}
	for _, f := range fields {
		views["by-"+f] = map[string]any{
			"map":     map[string]any{"fields": map[string]string{f: "asc"}, "partial_filter_selector": map[string]any{}},
			"reduce":  "_count",
			"options": map[string]any{"def": map[string]any{"fields": []string{f}}},
		}
	}
	b, _ := json.Marshal(map[string]any{"language": "query", "views": views})
	return string(b)
}

// entry is one index entry as a query reads it.
type entry struct {
	id    string
	value []byte // the field's key (mango.EncodeKey)
	// current is set when the entry names the rev_row of its document's
	// winner.
	current bool
}

// scan reads index name of design document ddoc, as the handle's cache
// has it, in key order from both tables (as localdb's queries do), and
// fails the test when the index is not in the set.
func (s *ixStore) scan(t *testing.T, ddoc, name string) []entry {
	t.Helper()
	set, err := s.cache.Current(context.Background(), s.db, nil)
	if err != nil {
		t.Fatal(err)
	}
	ix := set.Find(ddoc, name)
	if ix == nil {
		t.Fatalf("index %s/%s not in the set %v", ddoc, name, set.Defs())
	}
	rows, err := s.db.Query(`SELECT e.key, EXISTS (SELECT 1 FROM revs r JOIN docs d ON d.doc_id = r.doc_id AND d.winner = r.rev WHERE r.rev_row = e.rev_row)
		FROM (SELECT key, rev_row FROM `+indexstore.TableEntries+` WHERE ix_id = ?1
		UNION ALL SELECT key, rev_row FROM `+indexstore.TableFresh+` WHERE ix_id = ?1) e ORDER BY 1`, ix.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []entry
	for rows.Next() {
		var key []byte
		var e entry
		if err := rows.Scan(&key, &e.current); err != nil {
			t.Fatal(err)
		}
		n, ok := mango.KeyLen(key)
		if !ok || n >= len(key) || key[n] != 0 {
			t.Fatalf("entry key %x does not hold a field key, 00 and an id", key)
		}
		e.value, e.id = key[:n], string(key[n+1:])
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// ids returns the ids of entries in order.
func ids(es []entry) string {
	var b bytes.Buffer
	for i, e := range es {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(e.id)
	}
	return b.String()
}

// keyOf is the field key of a JSON value.
func keyOf(t *testing.T, js string) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(js)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return mango.EncodeKey(nil, v)
}
