package wire

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// fixture opens a recorded CouchDB 3 response of testdata/couchdb3.
func fixture(t testing.TB, name string) *http.Response {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "couchdb3", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	resp, err := http.ReadResponse(bufio.NewReader(f), nil)
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
