// Package synctest is the replication contract suite: the same tests run
// against every CouchDB-compatible remote (pouchdb-server, our own server,
// recorded CouchDB 3 answers). A remote is given as a factory of fresh,
// empty database URLs; the suite talks to it with sync/couch and checks its
// state with plain HTTP, independently of the code under test.
package synctest
