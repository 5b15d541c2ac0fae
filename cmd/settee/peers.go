package main

import (
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// newLocalPeer wraps a local store as a replication peer.
func newLocalPeer(db *localdb.DB) sync.Peer {
	return localpeer.New(db)
}

// newRemotePeer returns the HTTP peer of a remote database. It counts its
// traffic (couch.DB.Stats).
func newRemotePeer(r *remote) (*couch.DB, error) {
	opts := &couch.Options{
		Username: r.User, Password: r.password,
		CAFile: r.flags.caFile, InsecureSkipVerify: r.flags.insecure,
		Timeout: r.flags.timeout, Retries: r.retries,
		UserAgent: "settee/" + version,
	}
	db, err := couch.New(r.URL.String(), opts)
	if err != nil {
		return nil, &exitError{code: exitUsage, msg: err.Error(), err: err}
	}
	return db, nil
}
