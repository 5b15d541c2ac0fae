package localdb_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

func TestStatsCounts(t *testing.T) {
	db := open(t)
	r := put(t, db, "a", "", `{"v":"xxxxxxxxxx"}`)
	put(t, db, "a", r, `{"v":2}`)
	d := put(t, db, "gone", "", `{}`)
	if _, err := db.Delete(bg, "gone", d); err != nil {
		t.Fatal(err)
	}
	repl(t, db, "c", false, `{}`, "2-bb", "1-aa")
	repl(t, db, "c", false, `{}`, "2-cc", "1-aa")
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "att", Attachments: map[string]*couchdoc.Attachment{
		"f": {ContentType: "text/plain", Data: []byte("hello")}}}); err != nil {
		t.Fatal(err)
	}
	st, err := db.Stats(bg)
	if err != nil {
		t.Fatal(err)
	}
	// a: 2 revs, gone: 2, c: 3, att: 1.
	if st.Docs != 3 || st.Tombstones != 1 || st.Revisions != 8 || st.Leaves != 5 || st.Conflicts != 1 || st.Attachments != 1 {
		t.Errorf("counts %+v", st)
	}
	if st.File <= 0 || st.Active > st.File || st.External <= 5 || st.BodyBytes == 0 || st.RevMetaBytes == 0 || st.AttachmentBytes == 0 || st.IndexBytes == 0 {
		t.Errorf("bytes %+v", st)
	}
	if sum := st.BodyBytes + st.RevMetaBytes + st.AttachmentBytes + st.IndexBytes + st.OtherBytes + st.FreeBytes; sum != st.File {
		t.Errorf("page bytes add up to %d, file is %d", sum, st.File)
	}
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func TestCompactShrinksFileAfterPurge(t *testing.T) {
	db := open(t)
	body := fmt.Sprintf(`{"pad":%q}`, strings.Repeat("x", 500))
	var docs []*couchdoc.Doc
	for i := 0; i < 2000; i++ {
		docs = append(docs, &couchdoc.Doc{ID: fmt.Sprintf("d%05d", i), Body: []byte(body)})
	}
	res, err := db.BulkDocs(bg, docs, true)
	if err != nil {
		t.Fatal(err)
	}
	req := map[string][]string{}
	for i, r := range res[:1800] {
		req[docs[i].ID] = []string{r.Rev}
		if len(req) == 100 {
			if _, err := db.Purge(bg, req); err != nil {
				t.Fatal(err)
			}
			req = map[string][]string{}
		}
	}
	if err := db.Compact(bg); err != nil {
		t.Fatal(err)
	}
	before, err := db.Stats(bg)
	if err != nil {
		t.Fatal(err)
	}
	size := fileSize(t, db.Path())
	if before.FreeBytes != 0 {
		t.Errorf("%d free bytes left after Compact", before.FreeBytes)
	}
	if size > 450_000 { // 200 docs of ~1 KB and the schema's pages (an empty store is 184 KB); 2000 took over 1 MB
		t.Errorf("file is %d bytes after purging 90%% and compacting", size)
	}
	ran, err := db.CompactIfNeeded(bg, localdb.CompactPolicy{MinFreeBytes: 1})
	if err != nil || ran {
		t.Errorf("CompactIfNeeded on a compacted file: %v, %v", ran, err)
	}
}

func TestOldFileGetsAutoVacuum(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	put(t, db, "a", "", `{}`)
	db.Close()
	// Make it a file of an older Settee: no auto_vacuum, schema version 2.
	raw, err := sql.Open("sqlite", localdb.RawDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"PRAGMA auto_vacuum = NONE", "VACUUM", "ALTER TABLE att_chunks DROP COLUMN crc", "DROP INDEX att_content_chunks", "ALTER TABLE att_content DROP COLUMN chunks", "DROP TABLE mango_fresh", "DELETE FROM meta WHERE key = 'mango_fresh_rows'", "DROP TABLE att_partial", "DROP TRIGGER att_bytes_update", "DROP TRIGGER att_bytes_insert", "DROP TRIGGER att_bytes_delete", "ALTER TABLE att_content DROP COLUMN present",
		"ALTER TABLE rev_atts DROP COLUMN missing", "ALTER TABLE rev_atts DROP COLUMN encoding", "DROP TABLE purged_infos", "DROP TABLE expirations",
		"DELETE FROM meta WHERE key IN ('purge_seq', 'purged_infos_limit', 'seq_floor', 'external_bytes')",
		"DROP TRIGGER revs_bytes_insert", "DROP TRIGGER revs_bytes_delete", "PRAGMA user_version = 2"} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if av := autoVacuum(t, raw); av != 0 {
		t.Fatalf("auto_vacuum %d, want 0", av)
	}
	raw.Close()
	db, err = localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if mustGet(t, db, "a") == "" {
		t.Error("doc lost")
	}
	if err := db.CheckInvariants(bg); err != nil {
		t.Error(err)
	}
	raw, _ = sql.Open("sqlite", localdb.RawDSN(path))
	defer raw.Close()
	if av := autoVacuum(t, raw); av != 2 {
		t.Errorf("auto_vacuum %d after open, want 2 (incremental)", av)
	}
}

func autoVacuum(t *testing.T, db *sql.DB) int {
	t.Helper()
	var av int
	if err := db.QueryRow("PRAGMA auto_vacuum").Scan(&av); err != nil {
		t.Fatal(err)
	}
	return av
}
