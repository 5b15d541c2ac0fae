// Package testpeer starts real CouchDB-compatible peers for tests:
// pouchdb-server from the repository's pinned npm packages, in memory, on a
// free loopback port. A missing peer fails the test loudly; it never skips.
package testpeer
