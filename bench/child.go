package main

import (
	"context"
	"errors"
	"io"
)

// runChild will run our replicator once sync/couch lands.
func runChild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("bench: sync/couch is not in the tree yet")
}

