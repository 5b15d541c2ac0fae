// Package indexstore keeps the store's Mango json indexes in its SQLite
// file: the index set (Set, cached per handle by Cache), the entries, and
// the Writer that a write transaction of package localdb drives to keep
// them in line with the documents it writes. It works through the
// transaction's small interface (Tx) and never imports localdb; queries
// (localdb's ScanIndex) read the tables it names.
//
// A json index is a view of a design document whose language is "query",
// stored exactly as CouchDB 3 stores it, so indexes replicate like any
// design document. The store keeps, besides that document, one row per
// index in mango_indexes and one row per indexed document in
// mango_entries, a WITHOUT ROWID table whose primary key (ix_id, key) is a
// real SQLite B-tree: key is mango.EncodeKey of the indexed fields' values,
// a 00 byte and the document id, so a range of CouchDB collation order is
// a range of bytes, ties ordered by id. Each entry names the rev_row of the
// document's winner: a query reads a row's body with one lookup by rowid
// (the id is the key's tail, found with mango.KeyLen) rather than three
// (docs, then revs by (doc_id, rev), then the row), which was most of an
// equality query's time. The price is an UPDATE of the entry when the
// winner changes and its key does not.
//
// Entries are written in the transaction that changes a document's winning
// revision: only winning, non-deleted revisions of documents that are not
// design documents are indexed, and only when they have every indexed field
// and match the partial filter selector. The write path keeps this cheap:
// it decodes only the members the indexes read (mango.DecodeMembers), an
// index whose key for the document did not change is not written, and new
// entries are buffered, sorted by index and key, and inserted with
// multi-row INSERT OR IGNORE statements at the next flush (OR IGNORE: an
// INSERT that could abort half way needs a statement journal, which copied
// every index page it touched). A document's new entries go to a second,
// small B-tree (mango_fresh), merged into mango_entries in key order once
// it has grown, and queries read both (fresh.go): a batch's entries
// land all over a large index, and written there directly they dirtied
// most of its pages at every commit. A design document whose winner
// gains, changes or loses a query view (a local write or a replicated one)
// creates, rebuilds or drops its indexes in the same transaction; creating
// one reads every live document once. The store rebuilds every index
// (Writer.Rebuild) when the file was written with another key encoding
// (KeyVersion) or before indexes existed.
package indexstore
