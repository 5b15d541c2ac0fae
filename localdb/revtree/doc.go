// Package revtree is the pure logic of a document's revision tree, as
// CouchDB's couch_key_tree keeps it: merging a replicated history into the
// tree, picking the winning revision, listing leaves and stemming long
// histories. It does no I/O; the store persists a Tree with Marshal.
package revtree
