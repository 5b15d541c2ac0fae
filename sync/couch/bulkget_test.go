package couch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/sync"
)

// TestBulkGetUnsupportedByStatusOnly: only the status of the answer to
// _bulk_get tells a peer without it; a garbled answer (which parses to a
// 400 malformed error) does not.
func TestBulkGetUnsupportedByStatusOnly(t *testing.T) {
	answers := []struct {
		status int
		ctype  string
		body   string
		noBulk bool
	}{
		{404, "application/json", `{"error":"not_found","reason":"missing"}`, true},
		{405, "application/json", `{"error":"method_not_allowed","reason":"Only GET allowed"}`, true},
		{400, "application/json", `{"error":"bad_request","reason":"unknown"}`, true},
		{501, "text/plain", `not implemented`, true},
		{200, "application/json", `{"results": [{"id": "a", "docs": [}`, false},
		{403, "application/json", `{"error":"forbidden","reason":"no"}`, false},
	}
	var i int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := answers[i]
		w.Header().Set("Content-Type", a.ctype)
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
	defer srv.Close()
	db := newTestDB(t, srv.URL+"/db", &Options{Retries: -1})
	for i = range answers {
		a := answers[i]
		err := db.BulkGet(context.Background(), []sync.BulkGetRequest{{ID: "a", Rev: "1-x"}}, func(*couchdoc.Doc, error) error { return nil })
		if err == nil {
			t.Fatalf("%d %s: no error", a.status, a.body)
		}
		if got := errors.Is(err, sync.ErrNoBulkGet); got != a.noBulk {
			t.Errorf("%d %s: ErrNoBulkGet %v, want %v (%v)", a.status, a.body, got, a.noBulk, err)
		}
		if a.status == 200 && !errors.Is(err, wire.ErrMalformed) {
			t.Errorf("garbled answer: %v, want a malformed error", err)
		}
	}
}
