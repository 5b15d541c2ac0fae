// Package query is CouchDB's Mango query layer over a localdb store:
// json indexes (CreateIndex, ListIndexes, DeleteIndex), Find and Explain,
// with CouchDB 3.5's request validation, index choice, warnings and
// errors.
//
// # Indexes
//
// An index is a view of a design document with "language": "query",
// stored as CouchDB 3 stores it, so it replicates both ways like any design
// document. The store (package localdb, index.go) keeps each index as a
// SQLite B-tree of memcomparable keys in CouchDB collation order
// (mango.EncodeKey), maintained in the transaction that changes a
// document's winning revision, and built when the design document arrives,
// whether written here or replicated.
//
// # Planning
//
// As in CouchDB 3, a json index is usable for a query when the selector
// requires every indexed field to exist (fields also in the sort, and _id
// and _rev, excepted) and the sort fields are a prefix of its columns once
// the leading columns fixed by an $eq are dropped; an index with a
// partial_filter_selector is only used when use_index names it. Among the
// usable indexes the one whose leading columns are bounded by the most
// conditions wins, then the one with fewer columns, then by design doc and
// name. The $eq, $gt, $gte, $lt and $lte conditions on the leading columns
// bound the scanned key range; every row read is then matched against the
// whole selector. With no usable json index the query reads the _all_docs
// index (with CouchDB's warning) unless it sorts on anything but _id, which
// is no_usable_index.
//
// Selectors are normalized as CouchDB normalizes them: $not and $nor are
// pushed into the fields, which must then exist, so a negated field is a
// required one. Explain lists every other index with CouchDB 3.5's
// analysis (index_candidates: usable or not, the reason, the ranking) and
// the selector_hints. allow_fallback false turns a use_index that cannot
// serve the query into invalid_index; conflicts true adds _conflicts.
// Generated index names are CouchDB's (see indexname.go), so an index
// created on either side of a replication is the same design document.
//
// Design documents are never in _find's answers, as in CouchDB. The
// _all_docs index orders ids by bytes, as the store does, and, as in
// CouchDB, conditions on the top-level _id compare by raw term order
// (mango.CompareRaw: ids by bytes) where every other field uses the
// ICU-like collation of package mango; so _id's $eq, $gt, $gte, $lt and
// $lte bound an _all_docs scan to a byte range.
package query
