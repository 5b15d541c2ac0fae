package localdb_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

func TestBatchCommitsTogether(t *testing.T) {
	db := open(t)
	seq0 := updateSeq(t, db)
	var ra2, rb string
	err := db.Batch(bg, func(b *localdb.Batch) error {
		ra1, err := b.Put(&couchdoc.Doc{ID: "a", Body: json.RawMessage(`{"n":1}`)})
		if err != nil {
			return err
		}
		// Later writes of the batch see earlier ones.
		if ra2, err = b.Put(&couchdoc.Doc{ID: "a", Rev: ra1, Body: json.RawMessage(`{"n":2}`)}); err != nil {
			return err
		}
		if rb, err = b.Put(&couchdoc.Doc{ID: "b", Body: json.RawMessage(`{}`)}); err != nil {
			return err
		}
		if rb, err = b.Delete("b", rb); err != nil {
			return err
		}
		if _, err := b.Put(&couchdoc.Doc{ID: "_local/x", Body: json.RawMessage(`{}`)}); err != nil {
			return err
		}
		// Readers see nothing before the commit.
		if _, err := db.Get(bg, "a", localdb.GetOptions{}); !errors.Is(err, couchdoc.ErrNotFound) {
			t.Errorf("a visible before the commit: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := db.Get(bg, "a", localdb.GetOptions{})
	if err != nil || doc.Rev != ra2 || !strings.HasPrefix(ra2, "2-") || string(doc.Body) != `{"n":2}` {
		t.Fatalf("a: %+v %v", doc, err)
	}
	if tomb, err := db.Get(bg, "b", localdb.GetOptions{Rev: rb}); err != nil || !tomb.Deleted {
		t.Fatalf("b: %+v %v", tomb, err)
	}
	if _, err := db.GetLocal(bg, "_local/x"); err != nil {
		t.Fatal(err)
	}
	if got := updateSeq(t, db); got != seq0+4 {
		t.Fatalf("update seq %d, want %d", got, seq0+4)
	}
}

func TestBatchRefusedDocumentLeavesTheRest(t *testing.T) {
	db := open(t)
	put(t, db, "a", "", `{}`)
	err := db.Batch(bg, func(b *localdb.Batch) error {
		if _, err := b.Put(&couchdoc.Doc{ID: "a", Body: json.RawMessage(`{}`)}); !errors.Is(err, couchdoc.ErrConflict) {
			t.Errorf("put over a leaf without rev: %v", err)
		}
		if _, err := b.Delete("missing", "1-abc"); !errors.Is(err, couchdoc.ErrNotFound) {
			t.Errorf("delete of a missing document: %v", err)
		}
		if _, err := b.Put(&couchdoc.Doc{ID: "c", Body: json.RawMessage(`[1]`)}); !errors.Is(err, couchdoc.ErrBadRequest) && !errors.Is(err, couchdoc.ErrDocValidation) {
			t.Errorf("array body: %v", err)
		}
		if _, err := b.Put(nil); !errors.Is(err, couchdoc.ErrBadRequest) {
			t.Errorf("nil document: %v", err)
		}
		_, err := b.Put(&couchdoc.Doc{ID: "b", Body: json.RawMessage(`{}`)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get(bg, "b", localdb.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get(bg, "c", localdb.GetOptions{}); !errors.Is(err, couchdoc.ErrNotFound) {
		t.Fatalf("c: %v", err)
	}
}

func TestBatchRollsBack(t *testing.T) {
	for _, how := range []string{"error", "panic"} {
		t.Run(how, func(t *testing.T) {
			db := open(t)
			ra := put(t, db, "a", "", `{"n":1}`)
			seq0 := updateSeq(t, db)
			stop := errors.New("the app changed its mind")
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						err = errors.New("panicked")
					}
				}()
				err = db.Batch(bg, func(b *localdb.Batch) error {
					if _, err := b.Put(&couchdoc.Doc{ID: "a", Rev: ra, Body: json.RawMessage(`{"n":2}`)}); err != nil {
						return err
					}
					if _, err := b.Put(&couchdoc.Doc{ID: "b", Body: json.RawMessage(`{}`)}); err != nil {
						return err
					}
					if how == "panic" {
						panic("boom")
					}
					return stop
				})
			}()
			if how == "error" && err != stop || how == "panic" && (err == nil || err.Error() != "panicked") {
				t.Fatalf("Batch returned %v", err)
			}
			if got := updateSeq(t, db); got != seq0 {
				t.Fatalf("update seq %d after the rollback, want %d", got, seq0)
			}
			if doc, err := db.Get(bg, "a", localdb.GetOptions{}); err != nil || doc.Rev != ra {
				t.Fatalf("a: %+v %v", doc, err)
			}
			if _, err := db.Get(bg, "b", localdb.GetOptions{}); !errors.Is(err, couchdoc.ErrNotFound) {
				t.Fatalf("b: %v", err)
			}
			// The writer is usable again.
			put(t, db, "a", ra, `{"n":3}`)
		})
	}
}

func TestBatchHandleEndsWithTheBatch(t *testing.T) {
	db := open(t)
	var kept *localdb.Batch
	if err := db.Batch(bg, func(b *localdb.Batch) error { kept = b; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := kept.Put(&couchdoc.Doc{ID: "late", Body: json.RawMessage(`{}`)}); err == nil {
		t.Fatal("a put through a finished batch was accepted")
	}
	if _, err := db.Get(bg, "late", localdb.GetOptions{}); !errors.Is(err, couchdoc.ErrNotFound) {
		t.Fatalf("late: %v", err)
	}
}

func TestBatchRefusesStreamedBodies(t *testing.T) {
	db := open(t)
	err := db.Batch(bg, func(b *localdb.Batch) error {
		_, err := b.Put(&couchdoc.Doc{ID: "a", Body: json.RawMessage(`{}`), Attachments: map[string]*couchdoc.Attachment{
			"f": {Name: "f", ContentType: "text/plain", Body: strings.NewReader("hi")}}})
		return err
	})
	if !errors.Is(err, couchdoc.ErrBadRequest) {
		t.Fatalf("streamed body in a batch: %v", err)
	}
}
