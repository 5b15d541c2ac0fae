// Package conformance proves package localdb right against CouchDB's
// document model. It holds tests only:
//
//   - TestDifferential drives localdb and a real pouchdb-server with the same
//     random, seeded operation sequences (replicated histories that branch,
//     merge, arrive partial or twice; local edits on several branches,
//     refused edits, tombstones, recreated documents, attachments as data
//     and stubs) and asserts that both give the same winners, leaves,
//     _conflicts, open_revs=all bodies, histories and attachments,
//     _revs_diff answers, changes feeds and _all_docs. An in-test model of
//     CouchDB 3's revision forest decides where pouchdb-server is known to
//     answer differently from CouchDB; CouchDB is the spec.
//   - TestCrashRecovery writes acknowledged batches from a child process that
//     is killed with SIGKILL at random moments, many times, and checks after
//     every kill that the file is intact and every acknowledged batch is
//     there whole, and no batch is there in part.
//   - The fixed cases (cases_test.go) pin CouchDB answers
//     that no peer on this machine gives (pouchdb-server differs there,
//     or has no revs_limit).
//
// Where pouchdb-server 4.2.0 answers differently from CouchDB 3 (each is
// handled where it arises): integer seqs; JSON answers to open_revs; no
// _deleted_conflicts; _revs_diff lists revisions it holds only as
// ancestors and gives no possible_ancestors; a replicated inline
// attachment gets the revision's generation as revpos; DELETE naming an
// unknown rev answers 404 (CouchDB 409); edits naming a tombstone of a
// deleted document, or a live edit naming an unknown rev there, are
// accepted (CouchDB 409); a replicated history overlapping two of a
// document's trees leaves duplicate subtrees (CouchDB re-merges them).
//
// Replay a failing seed with
//
//	go test ./localdb/conformance -run TestDifferential -seed N [-ops N]
//
// (or SETTEE_CONFORMANCE_SEED=N, SETTEE_CONFORMANCE_OPS=N;
// SETTEE_CRASH_KILLS=N sets the number of kills).
package conformance
