package query_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// TestEntriesMigrateToRevRow opens a file of schema version 6, whose index
// entries named documents, not revision rows: the migration drops them and
// Open rebuilds every index.
func TestEntriesMigrateToRevRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v6.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	createIndex(t, db, `{"index": {"fields": ["n"]}, "ddoc": "m", "name": "n"}`)
	for i := 0; i < 30; i++ {
		if _, err := db.Put(bg, &couchdoc.Doc{ID: fmt.Sprintf("d%02d", i), Body: []byte(fmt.Sprintf(`{"n": %d}`, i%3))}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	db = rewrite(t, path, `CREATE TABLE old (ix_id INTEGER NOT NULL, key BLOB NOT NULL, doc_id INTEGER NOT NULL, PRIMARY KEY (ix_id, key)) WITHOUT ROWID;
		INSERT INTO old SELECT e.ix_id, e.key, r.doc_id FROM (SELECT * FROM mango_entries UNION ALL SELECT * FROM mango_fresh) e JOIN revs r ON r.rev_row = e.rev_row;
		DROP TABLE mango_entries; ALTER TABLE old RENAME TO mango_entries;
		DROP TABLE mango_fresh; DELETE FROM meta WHERE key = 'mango_fresh_rows'; ALTER TABLE att_chunks DROP COLUMN crc; DROP INDEX att_content_chunks; ALTER TABLE att_content DROP COLUMN chunks; PRAGMA user_version = 6`)
	if got := ids(t, find(t, db, `{"selector": {"n": 1}, "use_index": "m"}`)); len(got) != 10 {
		t.Fatalf("after migration n=1 finds %v", got)
	}
	if err := db.CheckInvariants(bg); err != nil {
		t.Fatal(err)
	}
}
