package sync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/server"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// Example shows the Go API end to end, as the README does: open a store,
// write and read a document, push it to a CouchDB (here an in-process
// Settee server), let another device edit the same document offline, pull,
// and resolve the conflict.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "settee-example-")
	defer os.RemoveAll(dir)

	// A CouchDB-compatible hub on loopback (use your CouchDB's URL instead).
	hub, _ := server.New(server.Config{DataDir: filepath.Join(dir, "hub")})
	defer hub.Close()
	ts := httptest.NewServer(hub)
	defer ts.Close()
	remoteURL := ts.URL + "/notes"

	// Open a local store and write a document.
	db, err := localdb.Open(filepath.Join(dir, "phone.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	rev, _ := db.Put(ctx, &couchdoc.Doc{ID: "note:1", Body: json.RawMessage(`{"text":"buy milk"}`)})
	doc, _ := db.Get(ctx, "note:1", localdb.GetOptions{})
	fmt.Printf("local: %s %s\n", doc.ID, doc.Body)

	// Push it, watching the replication's events.
	remote, _ := couch.New(remoteURL, nil) // credentials: couch.Options or user:pass@ in the URL
	res, err := sync.Replicate(ctx, sync.Options{
		Source: localpeer.New(db), Target: remote, CreateTarget: true,
		OnEvent: func(e sync.Event) { /* e.State, e.Stats.DocsWritten, e.Pending ... */ },
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pushed:", res.Stats.DocsWritten)

	// Another device edits the same document while we edit it offline.
	tablet, _ := couch.New(remoteURL, nil)
	other, _ := localdb.Open(filepath.Join(dir, "tablet.db"), nil)
	defer other.Close()
	sync.Replicate(ctx, sync.Options{Source: tablet, Target: localpeer.New(other)})
	other.Put(ctx, &couchdoc.Doc{ID: "note:1", Rev: rev, Body: json.RawMessage(`{"text":"buy oat milk"}`)})
	sync.Replicate(ctx, sync.Options{Source: localpeer.New(other), Target: tablet})
	db.Put(ctx, &couchdoc.Doc{ID: "note:1", Rev: rev, Body: json.RawMessage(`{"text":"buy milk and bread"}`)})

	// Sync both ways: both edits are kept, one wins everywhere.
	if _, err := sync.Sync(ctx, localpeer.New(db), remote, sync.Options{}); err != nil {
		log.Fatal(err)
	}
	doc, _ = db.Get(ctx, "note:1", localdb.GetOptions{Conflicts: true})
	fmt.Println("conflicts:", len(doc.Conflicts))

	// Resolve: write the merge on the winner and delete the losing leaf,
	// in one transaction.
	merged := json.RawMessage(`{"text":"buy oat milk and bread"}`)
	if _, err := db.ResolveConflict(ctx, "note:1", "", &couchdoc.Doc{Body: merged}); err != nil {
		log.Fatal(err)
	}
	sync.Sync(ctx, localpeer.New(db), remote, sync.Options{})
	doc, _ = db.Get(ctx, "note:1", localdb.GetOptions{Conflicts: true})
	fmt.Printf("resolved: %s conflicts: %d\n", doc.Body, len(doc.Conflicts))

	// Output:
	// local: note:1 {"text":"buy milk"}
	// pushed: 1
	// conflicts: 1
	// resolved: {"text":"buy oat milk and bread"} conflicts: 0
}
