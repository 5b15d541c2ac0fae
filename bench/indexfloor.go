package main

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/settee/settee/internal/procstat"
)

// The floor of phase index-write: what SQLite alone costs to hold the
// indexes' entries. After a mode's run, the indexed store's entries (index,
// key) are read back, grouped by the batch that wrote their document, and
// inserted into a bare table of mango_entries' shape in a new file, batch
// after batch (each sorted by index and key, as the store sorts its own),
// all in one transaction, with a page cache that holds the whole table: the
// B-tree inserts and one write of the pages at the commit, nothing else (no
// document, no decoding, no page read or spilled, no commit per batch). The
// plain store's time plus this is the least an indexed store could take,
// so plain / (plain + floor) bounds the ratio any design keeping the
// entries in SQLite B-trees could reach on this machine, as the pull's
// limit bounds a pull. (With SQLite's default 2-MB cache the same inserts
// took longer than the indexed store's whole overhead, which is why the
// store keeps new entries in a small second B-tree.)

// floorEntry is one index entry and the batch that wrote it.
type floorEntry struct {
	batch int
	ix    int64
	key   []byte
}

// indexFloor measures the floor for the entries of the store at dbPath,
// whose documents were written by the batches of docBatch (document id to
// batch number), in a new file in dir. It returns the wall and CPU
// seconds of the inserts.
func indexFloor(ctx context.Context, dbPath, dir string, docBatch map[string]int) (wall, cpu float64, err error) {
	entries, err := readEntries(ctx, dbPath, docBatch)
	if err != nil {
		return 0, 0, err
	}
	slices.SortStableFunc(entries, func(a, b floorEntry) int {
		return cmp.Or(cmp.Compare(a.batch, b.batch), cmp.Compare(a.ix, b.ix), bytes.Compare(a.key, b.key))
	})
	path := dir + "/floor.db"
	defer func() {
		for _, s := range []string{"", "-wal", "-shm"} {
			os.Remove(path + s)
		}
	}()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=page_size(8192)&_pragma=journal_mode(WAL)&_pragma=cache_size(-262144)")
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE entries (ix_id INTEGER NOT NULL, key BLOB NOT NULL, rev_row INTEGER NOT NULL,
		PRIMARY KEY (ix_id, key)) WITHOUT ROWID`); err != nil {
		return 0, 0, err
	}
	const chunk = 64
	q := "INSERT INTO entries (ix_id, key, rev_row) VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", chunk), ", ")
	t0, c0 := time.Now(), procstat.CPU()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback()
	many, err := tx.PrepareContext(ctx, q)
	if err != nil {
		return 0, 0, err
	}
	one, err := tx.PrepareContext(ctx, "INSERT INTO entries (ix_id, key, rev_row) VALUES (?, ?, ?)")
	if err != nil {
		return 0, 0, err
	}
	args := make([]any, 0, 3*chunk)
	for i := 0; i < len(entries); {
		if len(entries)-i >= chunk {
			args = args[:0]
			for j, e := range entries[i : i+chunk] {
				args = append(args, e.ix, e.key, i+j)
			}
			if _, err := many.ExecContext(ctx, args...); err != nil {
				return 0, 0, err
			}
			i += chunk
			continue
		}
		e := entries[i]
		if _, err := one.ExecContext(ctx, e.ix, e.key, i); err != nil {
			return 0, 0, err
		}
		i++
	}
	if err := tx.Commit(); err != nil {
		return 0, 0, err
	}
	return time.Since(t0).Seconds(), (procstat.CPU() - c0).Seconds(), nil
}

// readEntries reads the index entries of the store at dbPath, in both of
// its tables (see localdb/internal/indexstore/fresh.go), each with its
// document's batch.
func readEntries(ctx context.Context, dbPath string, docBatch map[string]int) ([]floorEntry, error) {
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT ix_id, key FROM mango_entries UNION ALL SELECT ix_id, key FROM mango_fresh")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []floorEntry
	for rows.Next() {
		var e floorEntry
		if err := rows.Scan(&e.ix, &e.key); err != nil {
			return nil, err
		}
		// A key ends with a 00 byte and its document's id (which holds
		// no 00 byte).
		i := bytes.LastIndexByte(e.key, 0)
		b, ok := docBatch[string(e.key[i+1:])]
		if i < 0 || !ok {
			return nil, fmt.Errorf("index entry %x: no batch wrote its document", e.key)
		}
		e.batch = b
		out = append(out, e)
	}
	return out, rows.Err()
}
