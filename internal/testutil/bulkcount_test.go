package testutil

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBulkDocsCounter: a batch the target acknowledged twice is listed; a
// batch it refused counts as sent but not acknowledged.
func TestBulkDocsCounter(t *testing.T) {
	refuse := false
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte("[]"))
	}))
	defer target.Close()
	c := NewBulkDocsCounter(t, target.URL)
	post := func(body string) {
		resp, err := http.Post(c.URL+"/db/_bulk_docs", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	post(`{"docs":[{"_id":"a","_rev":"1-x"},{"_id":"b","_rev":"1-y"}]}`)
	refuse = true
	post(`{"docs":[{"_id":"a","_rev":"1-x"},{"_id":"c","_rev":"1-z"}]}`)
	if revs, again := c.Counts(); revs != 3 || again != 0 {
		t.Fatalf("after a refused batch: %d sent, %d acknowledged twice; want 3, 0", revs, again)
	}
	refuse = false
	post(`{"docs":[{"_id":"a","_rev":"1-x"}]}`)
	if twice := c.Twice(); len(twice) != 1 || twice[0] != "a 1-x (2 times)" {
		t.Fatalf("twice: %v", twice)
	}
}
