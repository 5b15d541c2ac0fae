package localdb

import (
	"crypto/sha256"
	"os"
	"strings"
	"sync"

	"github.com/settee/settee/localdb/internal/cryptvfs"
)

// With SETTEE_TEST_ENCRYPT=1 every store the tests open without a key is
// encrypted with the suite's key (localdbtest.Key).
func init() {
	if os.Getenv("SETTEE_TEST_ENCRYPT") == "1" {
		k := sha256.Sum256([]byte("settee test key"))
		testKey = k[:]
	}
}

// SuiteKey is the key the suite gives stores opened without one (nil when
// the suite runs on plain stores).
func SuiteKey() []byte { return testKey }

var (
	suiteVFSOnce sync.Once
	suiteVFS     *cryptvfs.VFS
)

// RawDSN is dsn (a path, or a file: URI) for a test's own database/sql
// connection: when the file is an encrypted store, it reads it through a
// VFS with the suite's key, so the tests that look inside a store's
// tables work in both passes.
func RawDSN(dsn string) string {
	if testKey == nil {
		return dsn
	}
	path := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if h, err := readHeader(path); err != nil || !cryptvfs.IsEncrypted(h) {
		return dsn
	}
	suiteVFSOnce.Do(func() {
		var err error
		if suiteVFS, err = cryptvfs.New(testKey, pageSize); err != nil {
			panic(err)
		}
	})
	if !strings.HasPrefix(dsn, "file:") {
		dsn = "file:" + dsn
	}
	if strings.Contains(dsn, "?") {
		return dsn + "&vfs=" + suiteVFS.Name()
	}
	return dsn + "?vfs=" + suiteVFS.Name()
}
