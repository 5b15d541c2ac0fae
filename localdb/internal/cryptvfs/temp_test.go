package cryptvfs

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestTempFilesEncrypted: the temporary files SQLite writes for a sort
// that does not fit its cache (unlinked as soon as they are made, so only
// the process's open descriptors find them) hold no plaintext.
func TestTempFilesEncrypted(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the open files through /proc/self/fd")
	}
	path := filepath.Join(t.TempDir(), "s.db")
	_, db := openTest(t, path, testKey(t), true)
	db.SetMaxOpenConns(1)
	for _, q := range []string{"PRAGMA temp_store = FILE", "PRAGMA cache_size = 2",
		"CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000) INSERT INTO t SELECT i, 'TEMPMARK' || hex(randomblob(200)) FROM n"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	rows, err := db.Query("SELECT v FROM t ORDER BY substr(v, 20)")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	if !rows.Next() {
		t.Fatal("no rows")
	}
	// The sort is done and its temporary files are open.
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	temps := 0
	for _, fd := range fds {
		link, err := os.Readlink("/proc/self/fd/" + fd.Name())
		if err != nil || !bytes.HasSuffix([]byte(link), []byte("(deleted)")) {
			continue
		}
		b, err := os.ReadFile("/proc/self/fd/" + fd.Name())
		if err != nil {
			continue
		}
		temps++
		if bytes.Contains(b, []byte("TEMPMARK")) {
			t.Errorf("temporary file %s holds plaintext", link)
		}
	}
	if temps == 0 {
		t.Fatal("no temporary file was open: the test saw nothing")
	}
}
