// Package couchcorpus reads the recorded Apache CouchDB 3.5 conversations in
// testdata/couchdb35 (see its README) and compares another server's answers
// with CouchDB's, so that tests can hold Settee's server and client to
// CouchDB's real bytes rather than to fixtures written from the spec.
//
// What counts as "the same answer" is decided here once: the volatile
// fields the corpus README lists are normalized (sequences compared by
// their numeric prefix, revisions and ids made by ordinary writes mapped
// to the replaying server's own, boundaries, opaque ETags, instance
// times), everything else must match.
package couchcorpus
