// Package localdb is Settee's local revision store: CouchDB's document
// model (revision trees, conflicts, tombstones, attachments, local docs and
// a changes feed) in one SQLite file.
//
// # Concurrency
//
// A DB is safe for concurrent use. Writes go through one writer connection,
// one SQLite transaction per call (a whole BulkDocs batch is one
// transaction); reads use pools of read-only connections that, in WAL
// mode, never wait for the writer: one for Mango queries, which maps the
// file, and one for everything else, which does not (readpool.go says
// why). OpenRevsBatch reads many documents per
// read transaction, for replications reading this store. Close waits for
// the calls in flight.
// Follow, the changes feed's one follower, wakes for commits made through
// any connection to the file, from this process or another.
//
// # Watching other processes
//
// A commit in this process wakes the feeds of every DB open on the file
// directly. Another process's commit is seen through the operating
// system's file-change notification on the file's write-ahead log
// (Options.Watch, WatchNotify by default, through fsnotify): inotify on
// Linux and Android, kqueue on macOS and iOS, ReadDirectoryChangesW on
// Windows. The watch is held only while a feed waits, and then costs
// nothing until the log is written; a feed sees another process's commit
// within milliseconds. Where the notification cannot be set up (another
// platform, the system's inotify limits reached) or the log is removed
// under it, the DB asks SQLite for PRAGMA data_version every PollInterval
// (default half a second) instead. WatchLocal sees this process's commits
// only and runs nothing at all: for a store no other process writes.
//
// # Storage
//
// Each document is one docs row holding its whole revision tree (package
// revtree, encoded), its winning revision and its sequence; revision bodies
// live in revs, only for the revisions we have (ancestors known only by id
// are in the tree alone). Attachment bytes are stored once per digest, in
// 256 KiB chunks, and stream in and out (package
// localdb/internal/attachstore); which revision names which bytes is
// localdb's (rev_atts, attach*.go). Local documents have their own
// table. The schema is the numbered files of package migrations, applied in
// one transaction; PRAGMA user_version records the version.
//
// # Mango indexes
//
// Design documents with "language": "query" define json indexes, kept by
// package localdb/internal/indexstore: SQLite B-trees of
// CouchDB-collation-ordered keys, changed in the transaction that changes a
// document's winning revision, built when their design document arrives
// and rebuilt by Open after a key encoding change. ScanIndex reads them
// (index_read.go); package localdb/query plans and runs _find on them.
//
// # The write path
//
// Every write is one transaction on the writer connection, a wtx (tx.go):
// its bound statements, its update sequence, the rowids it hands out, the
// changes to the document counts, and the docs and revs rows it buffers
// for multi-row inserts (write_multirow.go). Documents are written through
// a docWriter (write_doc.go), which holds the transaction and the two
// parts a document's write touches besides its rows: attWriter
// (attach_write.go), the bodies staged before the transaction and the
// lazy flag, which resolves stubs and stores bytes through attachstore;
// and the index part, indexstore.Writer, which keeps the entries in line
// with each new winner. A part with state of its own hooks into the
// transaction (txPart): its buffered rows are flushed after the
// transaction's, it finishes before the commit, publishes after it
// (before feeds wake), and is saved and restored around a document's
// savepoint. A _bulk_docs batch stages its streamed bodies, then makes
// one pass through a docWriter; a lazy attachment's download stages its
// bytes, then one transaction fills them.
//
// # CouchDB semantics
//
// The rules follow CouchDB 3 and are tested against its source and against
// pouchdb-server (package localdb/conformance):
//   - The winner is the live leaf with the highest generation, then the
//     highest hash; deleted leaves only win when every leaf is deleted.
//   - Local edits (new_edits=true) must name a leaf. A document whose leaves
//     are all deleted is recreated by a live write without rev, which extends
//     the winning tombstone; naming a rev or writing a tombstone is a
//     conflict.
//   - Replicated writes (new_edits=false) merge the given history like
//     couch_key_tree; a revision the tree already has is ignored, with its
//     history, and reported as a success.
//   - A revision's id is couchdoc.NewRevHash of its parent, canonical body
//     and attachment digests: the same edit gives the same id everywhere.
//   - Trees are stemmed to the revs limit on write and on Compact.
//
// # SQL access
//
// sqlx maps rows to structs where a call reads a few rows once (Info,
// local documents, purge records). The paths that read or write many rows
// per call (bulk writes, changes, all_docs, revs_diff, index scans) keep
// database/sql: the writer's statements are prepared once and bound to
// each write transaction, its multi-row inserts take positional arguments
// appended to one reused slice, and reads Scan into reused variables;
// sqlx's reflection (struct mapping, named parameters) would add work per
// row on paths that move 100k rows.
//
// Errors are *couchdoc.Error values matched with errors.Is against the
// couchdoc sentinels; bad input changes nothing. The store's own
// sentinels are in errors.go.
//
// # Files
//
// A file's prefix names the part of the store it serves: tx.go the write
// transaction, write*.go the document writer (Put, BulkDocs, Batch, its
// multi-row inserts); attach*.go attachments (revisions' attachments,
// staging of streamed bodies, the writer's attachment part, lazy and
// resumable downloads); index*.go the Mango json indexes' reads and checks;
// changes*.go the changes feed (reading, counting, following, watching
// other processes, listeners); local.go the _local documents; alldocs.go,
// read*.go and revsdiff.go the other reads; db.go, file*.go, options.go,
// migrate*.go, checkpoint.go and remove.go the store's life, from open to
// removal. Packages under internal/ hold parts no app needs to see, each
// driven through a small interface of the write transaction and importing
// nothing of localdb: attachstore the attachment content (chunks and their
// checksums, staging, reading), indexstore the Mango indexes' storage and
// maintenance, multirow the multi-row INSERTs the writers use.
package localdb
