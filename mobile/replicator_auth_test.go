package mobile

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// swapToken is a TokenProvider whose token the test changes.
type swapToken struct{ tok atomic.Value }

func (s *swapToken) Token() (string, error) { return s.tok.Load().(string), nil }

// A server refusing the token shows "unauthorized" (not "error"); the
// replicator waits there and resumes by itself once the TokenProvider
// hands out a token the server accepts.
func TestReplicatorUnauthorizedUntilNewToken(t *testing.T) {
	var good atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer fresh" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"unauthorized","reason":"You are not authorized to access this db."}`))
			return
		}
		good.Store(true)
		switch r.URL.Path {
		case "/db":
			_, _ = w.Write([]byte(`{"db_name":"db","doc_count":0,"doc_del_count":0,"update_seq":"0","instance_start_time":"0"}`))
		case "/db/_changes":
			_, _ = w.Write([]byte(`{"results":[],"last_seq":"0","pending":0}`))
		default:
			if r.Method == http.MethodPut { // the checkpoint
				w.WriteHeader(http.StatusCreated)
				_, _ = w.Write([]byte(`{"ok":true,"id":"x","rev":"0-1"}`))
				return
			}
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"not_found","reason":"missing"}`))
		}
	}))
	defer srv.Close()
	d := openTest(t)
	tokens := &swapToken{}
	tokens.tok.Store("stale")
	cfg := NewReplicatorConfig(srv.URL + "/db")
	cfg.Direction, cfg.Tokens = "pull", tokens
	rec := newRecorder()
	r := must(NewReplicator(d, cfg))
	r.SetListener(rec)
	must(0, r.Start())
	defer r.Stop()
	if st := rec.waitState(t, "unauthorized"); st.LastError == "" {
		t.Fatalf("unauthorized status without its error: %+v", st)
	}
	if !r.running() {
		t.Fatal("the replicator waiting for a token is not running")
	}
	tokens.tok.Store("fresh")
	if st := rec.waitState(t, "stopped"); st.LastError != "" { // the one-shot pull completes with the new token
		t.Fatalf("after the new token: %+v", st)
	}
	if !good.Load() {
		t.Fatal("no request carried the new token")
	}
}
