// Package viewstore keeps the rows of JavaScript map/reduce views in
// SQLite: one file per design document signature, as CouchDB keeps one
// index file per signature, so a design document whose functions change
// gets a new, empty file and the old one is left for _view_cleanup, and a
// view build never holds the store's writer (documents keep being written
// while a view catches up).
//
// A file has one table of rows, a WITHOUT ROWID B-tree ordered by (view,
// key, docid, n): key is mango.EncodeKey of the emitted key, so a range of
// CouchDB collation order is a range of bytes, ties ordered by document id
// as CouchDB orders them (raw bytes), then by emit order. The emitted key
// and value are kept as JSON text beside it. The meta table records the
// signature and the store sequence the rows reflect; a Batch removes a
// document's old rows, adds its new ones and moves that sequence in one
// transaction, so a crash never leaves rows and sequence apart. A second
// level, the chunks table, records counts and value statistics of runs of
// rows, kept in the same transactions (see chunks.go): offsets and
// built-in reductions read it instead of every row.
package viewstore
