package testpeer

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestPouchDBStartsAndServes(t *testing.T) {
	s := PouchDB(t)
	u := s.CreateDB(t, "smoke")
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"db_name":"smoke"`) {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
}
