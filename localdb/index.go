package localdb

// Mango json indexes.
//
// A json index is a view of a design document whose language is "query",
// stored exactly as CouchDB 3 stores it, so indexes replicate like any
// design document. The store keeps, besides that document, one row per
// index in mango_indexes and one row per indexed document in
// mango_entries, a WITHOUT ROWID table whose primary key (ix_id, key) is a
// real SQLite B-tree: key is mango.EncodeKey of the indexed fields' values,
// a 00 byte and the document id, so a range of CouchDB collation order is
// a range of bytes, ties ordered by id. Each entry names the rev_row of the
// document's winner: a query reads a row's body with one lookup by rowid
// (the id is the key's tail, found with mango.KeyLen) rather than three
// (docs, then revs by (doc_id, rev), then the row), which was most of an
// equality query's time. The price is an UPDATE of the entry when the
// winner changes and its key does not.
//
// Entries are written in the transaction that changes a document's winning
// revision: only winning, non-deleted revisions of documents that are not
// design documents are indexed, and only when they have every indexed field
// and match the partial filter selector. The write path keeps this cheap:
// it decodes only the members the indexes read (mango.DecodeMembers), an
// index whose key for the document did not change is not written, and new
// entries are buffered, sorted by index and key, and inserted with
// multi-row INSERT OR IGNORE statements at the next flush (OR IGNORE: an
// INSERT that could abort half way needs a statement journal, which copied
// every index page it touched). A document's new entries go to a second,
// small B-tree (mango_fresh), merged into mango_entries in key order once
// it has grown, and queries read both (index_fresh.go): a batch's entries
// land all over a large index, and written there directly they dirtied
// most of its pages at every commit. A design document whose winner
// gains, changes or loses a query view (a local write or a replicated one)
// creates, rebuilds or drops its indexes in the same transaction; creating
// one reads every live document once. Open rebuilds every index when the
// file was written with another key encoding (mangoKeyVersion) or before
// indexes existed.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/settee/settee/internal/mango"
)

// mangoKeyVersion names the key encoding of mango_entries; Open rebuilds
// the indexes of a file written with another.
const mangoKeyVersion = "3"

// storedIndex is an index and its mango_indexes row.
type storedIndex struct {
	id  int64
	def *mango.Index
}

// ixSet is the store's indexes, sorted by design doc then name. A published
// set is never modified: a transaction that changes it works on a copy.
// gen is the file's mango_generation the set reflects: every change of the
// indexes bumps it, so a process sees another's changes (see currentSet).
type ixSet struct {
	list []*storedIndex
	gen  int64

	membersOnce sync.Once
	members     map[string]bool
}

// need returns the top-level members the set's keys are computed from, nil
// when a partial filter selector may read any member (the whole body is
// then decoded).
func (s *ixSet) need() map[string]bool {
	s.membersOnce.Do(func() {
		m := map[string]bool{}
		for _, ix := range s.list {
			if ix.def.Partial != nil {
				return
			}
			for _, f := range ix.def.Fields {
				m[mango.TopField(f.Field)] = true
			}
		}
		s.members = m
	})
	return s.members
}

func (s *ixSet) empty() bool { return s == nil || len(s.list) == 0 }

func (s *ixSet) find(ddoc, name string) *storedIndex {
	if s == nil {
		return nil
	}
	for _, ix := range s.list {
		if ix.def.DDoc == ddoc && ix.def.Name == name {
			return ix
		}
	}
	return nil
}

// Indexes returns the store's json indexes, sorted by design document then
// name, as the file has them now (indexes created by another process
// included). The _all_docs special index is not among them.
func (db *DB) Indexes() []*mango.Index {
	s := db.ixs.Load()
	if err := db.enter(); err == nil {
		if cur, err := db.currentSet(context.Background(), db.reads.conns, db.reads.stmts[qIndexGen]); err == nil {
			s = cur
		}
		db.leave()
	}
	return s.defs()
}

// defs returns the set's definitions in its order.
func (s *ixSet) defs() []*mango.Index {
	if s == nil {
		return nil
	}
	out := make([]*mango.Index, len(s.list))
	for i, ix := range s.list {
		out[i] = ix.def
	}
	return out
}

// loadIndexes reads the index set, after rebuilding every index if the
// file's key encoding is not ours (or it predates indexes).
func (db *DB) loadIndexes(ctx context.Context) error {
	var version string
	err := db.writer.QueryRowContext(ctx, "SELECT COALESCE((SELECT value FROM meta WHERE key = 'mango_key_version'), '')").Scan(&version)
	if err != nil {
		return fmt.Errorf("read index version: %w", err)
	}
	if version != mangoKeyVersion {
		return db.writeDocs(ctx, attWriter{}, func(w *docWriter) error { return w.index.rebuildIndexes() })
	}
	_, err = db.currentSet(ctx, db.writer, nil)
	return err
}

// qIndexGen reads the file's index generation.
const qIndexGen = "SELECT COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'mango_generation'), 0)"

// currentSet returns the index set of the file as q sees it: the cached
// one when its generation is the file's, else one read from q (and
// cached). Write transactions call it first, so a writer never misses an
// index another process created. genStmt, when not nil, is qIndexGen
// prepared for q: every query and write asks, and compiling the SQL each
// time cost a tenth of an indexed query.
func (db *DB) currentSet(ctx context.Context, q querier, genStmt *sql.Stmt) (*ixSet, error) {
	var gen int64
	row := func() *sql.Row { return q.QueryRowContext(ctx, qIndexGen) }
	if genStmt != nil {
		row = func() *sql.Row { return genStmt.QueryRowContext(ctx) }
	}
	if err := row().Scan(&gen); err != nil {
		return nil, fmt.Errorf("read index generation: %w", err)
	}
	if s := db.ixs.Load(); s != nil && s.gen == gen {
		return s, nil
	}
	rows, err := q.QueryContext(ctx, "SELECT ix_id, ddoc, name, view FROM mango_indexes")
	if err != nil {
		return nil, fmt.Errorf("load indexes: %w", err)
	}
	defer rows.Close()
	set := &ixSet{gen: gen}
	for rows.Next() {
		var id int64
		var ddoc, name string
		var view []byte
		if err := rows.Scan(&id, &ddoc, &name, &view); err != nil {
			return nil, err
		}
		body, _ := json.Marshal(map[string]any{"language": "query", "views": map[string]json.RawMessage{name: view}})
		defs := mango.IndexesFromDesign(ddoc, body)
		if len(defs) != 1 {
			return nil, fmt.Errorf("index %s/%s: stored view does not parse", ddoc, name)
		}
		set.list = append(set.list, &storedIndex{id: id, def: defs[0]})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sortSet(set)
	// Publish unless a newer set is there already (generations only grow).
	for {
		old := db.ixs.Load()
		if old != nil && old.gen >= gen || db.ixs.CompareAndSwap(old, set) {
			return set, nil
		}
	}
}

func sortSet(s *ixSet) {
	sort.Slice(s.list, func(i, j int) bool {
		a, b := s.list[i].def, s.list[j].def
		if a.DDoc != b.DDoc {
			return a.DDoc < b.DDoc
		}
		return a.Name < b.Name
	})
}

// rebuildIndexes drops every index and makes them again from the design
// documents, then records the key encoding.
func (iw *indexWriter) rebuildIndexes() error {
	if _, err := iw.t.exec("DELETE FROM mango_entries"); err != nil {
		return err
	}
	if err := iw.clearFresh(); err != nil {
		return err
	}
	if _, err := iw.t.exec("DELETE FROM mango_indexes"); err != nil {
		return err
	}
	iw.ixs = &ixSet{}
	if cur := iw.indexes(); cur != nil {
		iw.ixs.gen = cur.gen
	}
	if err := iw.bumpIndexGen(); err != nil {
		return err
	}
	rows, err := iw.t.tx.QueryContext(iw.t.ctx, `SELECT d.id, r.body FROM docs d JOIN revs r ON r.doc_id = d.doc_id AND r.rev = d.winner
		WHERE d.deleted = 0 AND d.id >= '_design/' AND d.id < '_design0'`)
	if err != nil {
		return fmt.Errorf("read design docs: %w", err)
	}
	type ddoc struct {
		id   string
		body []byte
	}
	var ddocs []ddoc
	for rows.Next() {
		var d ddoc
		if err := rows.Scan(&d.id, &d.body); err != nil {
			rows.Close()
			return err
		}
		ddocs = append(ddocs, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, d := range ddocs {
		if err := iw.designChanged(d.id, d.body); err != nil {
			return err
		}
	}
	_, err = iw.t.exec("INSERT INTO meta (key, value) VALUES ('mango_key_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", mangoKeyVersion)
	return err
}

// indexes returns the set this transaction sees.
func (iw *indexWriter) indexes() *ixSet {
	if iw.ixs != nil {
		return iw.ixs
	}
	return iw.t.db.ixs.Load()
}

// designChanged brings the indexes of design document id in line with its
// new winning body (nil when deleted): indexes gone or redefined are
// dropped, new ones are created and built.
func (iw *indexWriter) designChanged(id string, body []byte) error {
	var defs []*mango.Index
	if body != nil {
		defs = mango.IndexesFromDesign(id, body)
	}
	old := iw.indexes()
	next := &ixSet{}
	var build []*storedIndex
	if old != nil {
		for _, ix := range old.list {
			if ix.def.DDoc != id {
				next.list = append(next.list, ix)
			}
		}
	}
	for _, def := range defs {
		if cur := old.find(id, def.Name); cur != nil && cur.def.Same(def) {
			next.list = append(next.list, cur)
			continue
		}
		build = append(build, &storedIndex{def: def})
	}
	if old != nil {
		for _, ix := range old.list {
			if ix.def.DDoc == id && next.find(id, ix.def.Name) == nil {
				if _, err := iw.t.exec("DELETE FROM mango_entries WHERE ix_id = ?", ix.id); err != nil {
					return fmt.Errorf("drop index %s: %w", ix.def.Name, err)
				}
				if _, err := iw.t.exec("DELETE FROM mango_fresh WHERE ix_id = ?", ix.id); err != nil {
					return fmt.Errorf("drop index %s: %w", ix.def.Name, err)
				}
				if _, err := iw.t.exec("DELETE FROM mango_indexes WHERE ix_id = ?", ix.id); err != nil {
					return fmt.Errorf("drop index %s: %w", ix.def.Name, err)
				}
			}
		}
	}
	for _, ix := range build {
		var view bytes.Buffer
		if err := json.Compact(&view, ix.def.View(json.RawMessage(`{}`))); err != nil {
			return err
		}
		res, err := iw.t.exec("INSERT INTO mango_indexes (ddoc, name, view) VALUES (?, ?, ?)", id, ix.def.Name, view.Bytes())
		if err != nil {
			return fmt.Errorf("create index %s: %w", ix.def.Name, err)
		}
		if ix.id, err = res.LastInsertId(); err != nil {
			return err
		}
		if err := iw.buildIndex(ix); err != nil {
			return err
		}
		next.list = append(next.list, ix)
	}
	if len(build) == 0 && old != nil && len(next.list) == len(old.list) {
		return nil
	}
	sortSet(next)
	if old != nil {
		next.gen = old.gen
	}
	iw.ixs = next
	return iw.bumpIndexGen()
}

// bumpIndexGen records a change of the index set in the file (and in
// iw.ixs, published on commit).
func (iw *indexWriter) bumpIndexGen() error {
	iw.ixs.gen++
	_, err := iw.t.exec("INSERT INTO meta (key, value) VALUES ('mango_generation', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", iw.ixs.gen)
	return err
}

// buildPage is how many documents buildIndex reads per query; buildSort
// how many entries it sorts before inserting them.
const (
	buildPage = 1000
	buildSort = 200_000
)

// builtEntry is an entry buildIndex holds until it inserts a sorted run.
type builtEntry struct {
	key    []byte
	revRow int64
}

// buildIndex indexes every live document, a page at a time. Entries are
// inserted in key order, runs of up to buildSort at once: inserting in
// document order would land each one on a random page of the B-tree.
func (iw *indexWriter) buildIndex(ix *storedIndex) error {
	after := int64(-1)
	var key []byte
	one := &ixSet{list: []*storedIndex{ix}}
	var run []builtEntry
	insertRun := func() error {
		sort.Slice(run, func(i, j int) bool { return bytes.Compare(run[i].key, run[j].key) < 0 })
		for i, e := range run {
			iw.entries = append(iw.entries, entryRow{ix.id, e.key, e.revRow})
			if (i+1)%(10*multiRowChunk) == 0 {
				if err := iw.t.flush(); err != nil {
					return err
				}
			}
		}
		run = run[:0]
		return iw.t.flush()
	}
	for {
		if err := iw.t.flush(); err != nil {
			return err
		}
		rows, err := iw.t.tx.QueryContext(iw.t.ctx, `SELECT d.doc_id, d.id, d.winner, r.rev_row, r.body FROM docs d
			JOIN revs r ON r.doc_id = d.doc_id AND r.rev = d.winner
			WHERE d.doc_id > ? AND d.deleted = 0 ORDER BY d.doc_id LIMIT ?`, after, buildPage)
		if err != nil {
			return fmt.Errorf("build index %s: %w", ix.def.Name, err)
		}
		n := 0
		for rows.Next() {
			var docID, revRow int64
			var id, rev string
			var body []byte
			if err := rows.Scan(&docID, &id, &rev, &revRow, &body); err != nil {
				rows.Close()
				return err
			}
			n++
			after = docID
			if mango.IsDesignID(id) {
				continue
			}
			doc, err := decodeMembers(one, id, rev, body)
			if err != nil {
				continue // not an object: in no index
			}
			var ok bool
			if key, ok = entryKey(key[:0], ix.def, doc, id); ok {
				run = append(run, builtEntry{bytes.Clone(key), revRow})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if n < buildPage || len(run) >= buildSort {
			if err := insertRun(); err != nil {
				return err
			}
		}
		if n < buildPage {
			return nil
		}
	}
}

// entryKey appends the stored key of doc in index def: the fields' key, 00,
// the id.
func entryKey(dst []byte, def *mango.Index, doc map[string]any, id string) ([]byte, bool) {
	dst, ok := def.Entry(dst, doc)
	if !ok {
		return dst, false
	}
	return append(append(dst, 0), id...), true
}

// decodeMembers decodes what the indexes of set read from a stored body:
// only the members their fields start with (see ixSet.need). Keys computed
// from it are those of the whole body, from which the invariant check
// computes them.
func decodeMembers(set *ixSet, id, rev string, body []byte) (map[string]any, error) {
	return mango.DecodeDoc(id, rev, body, set.need())
}
