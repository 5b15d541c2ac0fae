// Package mango matches JSON documents against CouchDB Mango selectors, the
// query language of _find and of the changes feed's filter=_selector. It
// follows CouchDB's semantics (mango_selector.erl): implicit $and and $eq,
// dotted field paths, a missing field matches nothing but {"$exists": false}
// (and the negation of a condition), and comparisons across types use
// CouchDB's collation order.
package mango
