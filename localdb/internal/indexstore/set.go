package indexstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/settee/settee/internal/mango"
)

// Index is an index and its mango_indexes row.
type Index struct {
	ID  int64
	Def *mango.Index
}

// Set is the store's indexes, sorted by design doc then name. A published
// set is never modified: a transaction that changes it works on a copy.
// gen is the file's mango_generation the set reflects: every change of the
// indexes bumps it, so a process sees another's changes (see
// Cache.Current).
type Set struct {
	list []*Index
	gen  int64

	membersOnce sync.Once
	members     map[string]bool
}

// Gen is the file's index generation the set reflects.
func (s *Set) Gen() int64 { return s.gen }

// need returns the top-level members the set's keys are computed from, nil
// when a partial filter selector may read any member (the whole body is
// then decoded).
func (s *Set) need() map[string]bool {
	s.membersOnce.Do(func() {
		m := map[string]bool{}
		for _, ix := range s.list {
			if ix.Def.Partial != nil {
				return
			}
			for _, f := range ix.Def.Fields {
				m[mango.TopField(f.Field)] = true
			}
		}
		s.members = m
	})
	return s.members
}

func (s *Set) empty() bool { return s == nil || len(s.list) == 0 }

// Find returns index name of design document ddoc, nil when the set has
// none.
func (s *Set) Find(ddoc, name string) *Index {
	if s == nil {
		return nil
	}
	for _, ix := range s.list {
		if ix.Def.DDoc == ddoc && ix.Def.Name == name {
			return ix
		}
	}
	return nil
}

// Defs returns the set's definitions in its order.
func (s *Set) Defs() []*mango.Index {
	if s == nil {
		return nil
	}
	out := make([]*mango.Index, len(s.list))
	for i, ix := range s.list {
		out[i] = ix.Def
	}
	return out
}

func sortSet(s *Set) {
	sort.Slice(s.list, func(i, j int) bool {
		a, b := s.list[i].Def, s.list[j].Def
		if a.DDoc != b.DDoc {
			return a.DDoc < b.DDoc
		}
		return a.Name < b.Name
	})
}

// Querier is what reading the set needs of a *sql.Tx or *sql.DB.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// GenQuery reads the file's index generation.
const GenQuery = "SELECT COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'mango_generation'), 0)"

// Cache is the newest index set a handle on the file has seen (nil until
// one is read). Safe for concurrent use.
type Cache struct {
	p atomic.Pointer[Set]
}

// Load returns the cached set.
func (c *Cache) Load() *Set { return c.p.Load() }

// Current returns the index set of the file as q sees it: the cached one
// when its generation is the file's, else one read from q (and cached).
// Write transactions call it first, so a writer never misses an index
// another process created. genStmt, when not nil, is GenQuery prepared
// for q: every query and write asks, and compiling the SQL each time cost
// a tenth of an indexed query.
func (c *Cache) Current(ctx context.Context, q Querier, genStmt *sql.Stmt) (*Set, error) {
	var gen int64
	row := func() *sql.Row { return q.QueryRowContext(ctx, GenQuery) }
	if genStmt != nil {
		row = func() *sql.Row { return genStmt.QueryRowContext(ctx) }
	}
	if err := row().Scan(&gen); err != nil {
		return nil, fmt.Errorf("read index generation: %w", err)
	}
	if s := c.p.Load(); s != nil && s.gen == gen {
		return s, nil
	}
	rows, err := q.QueryContext(ctx, "SELECT ix_id, ddoc, name, view FROM mango_indexes")
	if err != nil {
		return nil, fmt.Errorf("load indexes: %w", err)
	}
	defer rows.Close()
	set := &Set{gen: gen}
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
		set.list = append(set.list, &Index{ID: id, Def: defs[0]})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sortSet(set)
	// Publish unless a newer set is there already (generations only grow).
	for {
		old := c.p.Load()
		if old != nil && old.gen >= gen || c.p.CompareAndSwap(old, set) {
			return set, nil
		}
	}
}
