// Package rtest holds the helpers of Settee's reliability tests: snapshots of
// a database's whole revision forest taken independently of the code under
// test (plain HTTP for remotes, the store's own API for local stores), their
// comparison, fault injectors (Toxiproxy in process, and an HTTP proxy of
// our own for faults at the HTTP level) and the counters the tests report.
package rtest
