package indexstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb/internal/multirow"
)

// Rebuild drops every index and makes them again from the design
// documents, then records the key encoding.
func (iw *Writer) Rebuild() error {
	if _, err := iw.t.Exec("DELETE FROM mango_entries"); err != nil {
		return err
	}
	if err := iw.clearFresh(); err != nil {
		return err
	}
	if _, err := iw.t.Exec("DELETE FROM mango_indexes"); err != nil {
		return err
	}
	// The generation goes on from the current set's: a handle holding a
	// set of an earlier generation must read the rebuilt one, whose rows
	// (ix_id) may differ.
	cur := iw.indexes()
	iw.ixs = &Set{}
	if cur != nil {
		iw.ixs.gen = cur.gen
	}
	if err := iw.bumpIndexGen(); err != nil {
		return err
	}
	rows, err := iw.t.SQL().QueryContext(iw.t.Context(), `SELECT d.id, r.body FROM docs d JOIN revs r ON r.doc_id = d.doc_id AND r.rev = d.winner
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
	_, err = iw.t.Exec("INSERT INTO meta (key, value) VALUES ('mango_key_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", KeyVersion)
	return err
}

// designChanged brings the indexes of design document id in line with its
// new winning body (nil when deleted): indexes gone or redefined are
// dropped, new ones are created and built.
func (iw *Writer) designChanged(id string, body []byte) error {
	var defs []*mango.Index
	if body != nil {
		defs = mango.IndexesFromDesign(id, body)
	}
	old := iw.indexes()
	next := &Set{}
	var build []*Index
	if old != nil {
		for _, ix := range old.list {
			if ix.Def.DDoc != id {
				next.list = append(next.list, ix)
			}
		}
	}
	for _, def := range defs {
		if cur := old.Find(id, def.Name); cur != nil && cur.Def.Same(def) {
			next.list = append(next.list, cur)
			continue
		}
		build = append(build, &Index{Def: def})
	}
	if old != nil {
		for _, ix := range old.list {
			if ix.Def.DDoc == id && next.Find(id, ix.Def.Name) == nil {
				if _, err := iw.t.Exec("DELETE FROM mango_entries WHERE ix_id = ?", ix.ID); err != nil {
					return fmt.Errorf("drop index %s: %w", ix.Def.Name, err)
				}
				if _, err := iw.t.Exec("DELETE FROM mango_fresh WHERE ix_id = ?", ix.ID); err != nil {
					return fmt.Errorf("drop index %s: %w", ix.Def.Name, err)
				}
				if _, err := iw.t.Exec("DELETE FROM mango_indexes WHERE ix_id = ?", ix.ID); err != nil {
					return fmt.Errorf("drop index %s: %w", ix.Def.Name, err)
				}
			}
		}
	}
	for _, ix := range build {
		var view bytes.Buffer
		if err := json.Compact(&view, ix.Def.View(json.RawMessage(`{}`))); err != nil {
			return err
		}
		res, err := iw.t.Exec("INSERT INTO mango_indexes (ddoc, name, view) VALUES (?, ?, ?)", id, ix.Def.Name, view.Bytes())
		if err != nil {
			return fmt.Errorf("create index %s: %w", ix.Def.Name, err)
		}
		if ix.ID, err = res.LastInsertId(); err != nil {
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
func (iw *Writer) bumpIndexGen() error {
	iw.ixs.gen++
	_, err := iw.t.Exec("INSERT INTO meta (key, value) VALUES ('mango_generation', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", iw.ixs.gen)
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
func (iw *Writer) buildIndex(ix *Index) error {
	after := int64(-1)
	var key []byte
	one := &Set{list: []*Index{ix}}
	var run []builtEntry
	insertRun := func() error {
		sort.Slice(run, func(i, j int) bool { return bytes.Compare(run[i].key, run[j].key) < 0 })
		for i, e := range run {
			iw.entries = append(iw.entries, entryRow{ix.ID, e.key, e.revRow})
			if (i+1)%(10*multirow.Chunk) == 0 {
				if err := iw.t.Flush(); err != nil {
					return err
				}
			}
		}
		run = run[:0]
		return iw.t.Flush()
	}
	for {
		if err := iw.t.Flush(); err != nil {
			return err
		}
		rows, err := iw.t.SQL().QueryContext(iw.t.Context(), `SELECT d.doc_id, d.id, d.winner, r.rev_row, r.body FROM docs d
			JOIN revs r ON r.doc_id = d.doc_id AND r.rev = d.winner
			WHERE d.doc_id > ? AND d.deleted = 0 ORDER BY d.doc_id LIMIT ?`, after, buildPage)
		if err != nil {
			return fmt.Errorf("build index %s: %w", ix.Def.Name, err)
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
			if key, ok = EntryKey(key[:0], ix.Def, doc, id); ok {
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
