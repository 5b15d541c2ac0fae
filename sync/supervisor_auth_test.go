package sync_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/testutil"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/synctest"
)

// tokenGate is a reverse proxy to a hub letting through only requests that
// carry "Authorization: Bearer <good>"; others get CouchDB's 401.
func tokenGate(t testing.TB, hubURL, good string) string {
	t.Helper()
	u, err := url.Parse(hubURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	rp.FlushInterval = -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+good {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"unauthorized","reason":"You are not authorized to access this db."}`))
			return
		}
		r.Header.Del("Authorization")
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + u.Path
}

// A continuous pull refused with 401 waits in StateUnauthorized (it does
// not end) and resumes by itself as soon as the token provider hands out
// a token the server accepts.
func TestSupervisorUnauthorizedWaitsForNewToken(t *testing.T) {
	h := startHub(t)
	remoteURL := h.url("notes")
	testutil.DoJSON(context.Background(), t, "PUT", remoteURL, nil, nil)
	putRemote(t, remoteURL, "a", 20)
	gate := tokenGate(t, remoteURL, "good")
	var token atomic.Value
	token.Store("expired")
	remote, err := couch.New(gate, &couch.Options{TokenFunc: func(context.Context) (string, error) { return token.Load().(string), nil }})
	if err != nil {
		t.Fatal(err)
	}
	db := localdbtest.OpenNamed(t, "local", nil)
	var log eventLog
	sup, err := sync.NewSupervisor(sync.SupervisorConfig{Local: synctest.Local(db), Remote: remote, Direction: sync.Pull,
		Options: sync.Options{Continuous: true, OnEvent: log.add, RetryDelay: 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := synctest.Ctx(t)
	if err := sup.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer sup.Stop()
	n := log.waitState(t, 0, sync.StateUnauthorized)
	if st := sup.Status(); st.State != sync.StateUnauthorized || !errors.Is(st.LastError, couchdoc.ErrUnauthorized) {
		t.Fatalf("status %s (%v), want unauthorized with the 401", st.State, st.LastError)
	}
	time.Sleep(300 * time.Millisecond) // it waits: no new session while the token is the same
	for _, e := range log.all()[n:] {
		if e.Kind == sync.EventState {
			t.Fatalf("state %s while the token did not change", e.State)
		}
	}
	token.Store("good")
	log.waitState(t, n, sync.StateIdle)
	if got := docCount(t, db); got != 20 {
		t.Fatalf("%d documents pulled after the new token, want 20", got)
	}
	if err := sup.Stop(); err != nil {
		t.Fatalf("Stop = %v after recovering", err)
	}
}

// Fixed credentials cannot change: a 401 ends the supervisor in
// StateUnauthorized with the error (the CLI's exit code 4).
func TestSupervisorUnauthorizedFixedCredentials(t *testing.T) {
	h := startHub(t)
	remoteURL := h.url("notes")
	testutil.DoJSON(context.Background(), t, "PUT", remoteURL, nil, nil)
	remote, err := couch.New(tokenGate(t, remoteURL, "good"), &couch.Options{BearerToken: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	sup, err := sync.NewSupervisor(sync.SupervisorConfig{Local: synctest.Local(localdbtest.OpenNamed(t, "local", nil)), Remote: remote,
		Direction: sync.Both, Options: sync.Options{Continuous: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sup.Start(synctest.Ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := sup.Wait(); !errors.Is(err, couchdoc.ErrUnauthorized) {
		t.Fatalf("Wait = %v, want the 401", err)
	}
	if st := sup.Status(); st.State != sync.StateUnauthorized {
		t.Fatalf("state %s, want unauthorized", st.State)
	}
}
