package localdb_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/settee/settee/localdb"
)

// heard collects the ids a listener hears, on the DB's goroutine.
type heard chan string

func (h heard) fn(c *localdb.Change) { h <- c.ID }

// next returns the next id heard, failing after a bounded wait.
func (h heard) next(t *testing.T) string {
	t.Helper()
	select {
	case id := <-h:
		return id
	case <-time.After(10 * time.Second):
		t.Fatal("no change heard within 10 s")
		return ""
	}
}

// none checks that nothing more is heard for a short while.
func (h heard) none(t *testing.T) {
	t.Helper()
	select {
	case id := <-h:
		t.Fatalf("heard %q after the end", id)
	case <-time.After(300 * time.Millisecond):
	}
}

func TestChangeListeners(t *testing.T) {
	db := open(t)
	put(t, db, "before", "", `{}`) // before the listeners: not heard
	all, onlyA := make(heard, 10), make(heard, 10)
	la, err := db.AddChangeListener(bg, all.fn)
	if err != nil {
		t.Fatal(err)
	}
	ld, err := db.AddDocumentChangeListener(bg, "a", onlyA.fn)
	if err != nil {
		t.Fatal(err)
	}
	ra := put(t, db, "a", "", `{}`)
	put(t, db, "b", "", `{}`)
	if got := []string{all.next(t), all.next(t)}; got[0] != "a" || got[1] != "b" {
		t.Fatalf("all heard %v, want [a b]", got)
	}
	if got := onlyA.next(t); got != "a" {
		t.Fatalf("the listener of a heard %q", got)
	}
	onlyA.none(t)
	ld.Remove()
	ld.Remove() // twice: a no-op
	put(t, db, "a", ra, `{"n":2}`)
	if got := all.next(t); got != "a" {
		t.Fatalf("all heard %q", got)
	}
	onlyA.none(t)
	la.Remove()
	put(t, db, "c", "", `{}`)
	all.none(t)

	// A new listener after the last one went starts a new follower, at the
	// head.
	again := make(heard, 10)
	l, err := db.AddChangeListener(bg, again.fn)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Remove()
	put(t, db, "d", "", `{}`)
	if got := again.next(t); got != "d" {
		t.Fatalf("the new listener heard %q, want d", got)
	}
}

func TestChangeListenerRemovesItself(t *testing.T) {
	db := open(t)
	h := make(heard, 10)
	var l *localdb.Listener
	var err error
	l, err = db.AddChangeListener(bg, func(c *localdb.Change) {
		h <- c.ID
		l.Remove()
	})
	if err != nil {
		t.Fatal(err)
	}
	put(t, db, "a", "", `{}`)
	put(t, db, "b", "", `{}`)
	if got := h.next(t); got != "a" {
		t.Fatalf("heard %q", got)
	}
	h.none(t)
}

func TestChangeListenerHearsOtherConnections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	db, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := localdb.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	h := make(heard, 10)
	if _, err := db.AddDocumentChangeListener(bg, "x", h.fn); err != nil {
		t.Fatal(err)
	}
	put(t, other, "x", "", `{}`)
	if got := h.next(t); got != "x" {
		t.Fatalf("heard %q", got)
	}
	// Close ends the follower while a listener is registered.
	done := make(chan error, 1)
	go func() { done <- db.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return with a listener registered")
	}
	if _, err := db.AddChangeListener(bg, h.fn); err == nil {
		t.Fatal("a listener was added to a closed DB")
	}
}
