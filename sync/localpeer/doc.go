// Package localpeer makes the local SQLite store (*localdb.DB) a replication
// peer. It calls the store directly: no HTTP and no JSON round trips for
// documents; attachment bodies stream from and into the store.
package localpeer
