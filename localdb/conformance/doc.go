// Package conformance proves package localdb right against CouchDB's
// document model. It holds tests only:
//
//   - TestDifferential drives localdb and a real pouchdb-server with the same
//     random, seeded operation sequences (replicated histories that branch,
//     merge, arrive partial or twice; local edits on several branches,
//     refused edits, tombstones, recreated documents) and asserts that both
//     give the same winners, leaves, conflicts, open_revs=all bodies and
//     histories, _revs_diff answers and changes feeds. An in-test model of
//     CouchDB's revision forest decides the cases where pouchdb-server is
//     known to answer differently from CouchDB (each is documented where it
//     is handled); CouchDB's semantics are the spec.
//   - TestCrashRecovery writes acknowledged batches from a child process that
//     is killed with SIGKILL at random moments, and checks after every kill
//     that the file is intact and every acknowledged batch is there whole,
//     and no batch is there in part.
//
// Replay a failing seed with
//
//	go test ./localdb/conformance -run TestDifferential -seed N
//
// (or SETTEE_CONFORMANCE_SEED=N).
package conformance
