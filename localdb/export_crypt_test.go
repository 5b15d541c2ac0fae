package localdb

import (
	"crypto/sha256"
	"os"
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
