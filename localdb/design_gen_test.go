package localdb_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/localdbtest"
)

// DesignGeneration moves with every commit that writes, deletes or purges
// a design document, and with nothing else.
func TestDesignGeneration(t *testing.T) {
	ctx := context.Background()
	db := localdbtest.OpenNamed(t, "gen", nil)
	g0 := db.DesignGeneration()
	if _, err := db.Put(ctx, &couchdoc.Doc{ID: "plain", Body: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if db.DesignGeneration() != g0 {
		t.Fatal("a plain document moved the design generation")
	}
	rev, err := db.Put(ctx, &couchdoc.Doc{ID: "_design/app", Body: json.RawMessage(`{"validate_doc_update":"function(){}"}`)})
	if err != nil {
		t.Fatal(err)
	}
	g1 := db.DesignGeneration()
	if g1 == g0 {
		t.Fatal("writing a design document left the generation")
	}
	if _, err := db.Delete(ctx, "_design/app", rev); err != nil {
		t.Fatal(err)
	}
	g2 := db.DesignGeneration()
	if g2 == g1 {
		t.Fatal("deleting a design document left the generation")
	}
	if _, err := db.Purge(ctx, map[string][]string{"_design/app": {rev}}); err != nil {
		t.Fatal(err)
	}
	if db.DesignGeneration() == g2 {
		t.Fatal("purging a design document left the generation")
	}
}
