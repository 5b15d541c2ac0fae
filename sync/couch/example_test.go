package couch_test

import (
	"context"
	"fmt"
	"time"

	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
)

func ExampleNew() {
	db, err := couch.New("https://alice:secret@couch.example.com/notes", &couch.Options{
		Session: true, // POST /_session once, then the AuthSession cookie
		Timeout: 30 * time.Second,
		Retries: 5,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(db) // credentials never show
	// Output: https://couch.example.com/notes
}

func ExampleIsRetryable() {
	db, _ := couch.New("http://127.0.0.1:1/db", &couch.Options{Retries: -1})
	_, err := db.Info(context.Background())
	fmt.Println(couch.IsRetryable(err)) // nothing listens there: worth retrying later
	// Output: true
}

// A replicator gets the client as a sync.Peer and discovers its extras.
func Example_capabilities() {
	var p sync.Peer
	p, _ = couch.New("http://127.0.0.1:5984/db", nil)
	_, bulkGet := p.(sync.BulkGetter)
	_, create := p.(sync.Creator)
	fmt.Println(bulkGet, create)
	// Output: true true
}
