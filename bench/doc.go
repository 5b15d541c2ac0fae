// Command bench measures Settee's replicator against PouchDB and against
// the limit (the bare transfer plus a plain SQLite insert), on the same
// generated dataset, served by the same CouchDB-compatible server, in one
// run.
//
//	go run ./bench                       # 100,000 docs against a pouchdb-server it starts
//	go run ./bench -docs 2000            # a quick run
//	go run ./bench -couch http://admin:pw@127.0.0.1:5984   # a real CouchDB
//	go run ./bench -server settee        # our own server as the referee
//	go run ./bench -big-attachment 1GB -server settee   # one document with a 1 GB attachment
//	go run ./bench -docs 1000000 -contenders settee -phases pull
//
// It prints a table and writes bench-out/results.json and
// bench-out/results.svg. Each replication runs in its own process so that
// its peak RSS is its own: ours is this binary re-executed, PouchDB's is
// node running bench/pouchdb.js.
package main
