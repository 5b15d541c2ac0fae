// Package sync replicates between two CouchDB peers with the CouchDB
// replication protocol: push, pull and two-way sync, one-shot or
// continuous. A peer is the local SQLite store (package sync/localpeer) or a
// CouchDB database over HTTP (package sync/couch).
//
// Replicate runs one direction, Sync both; New and NewSync return a
// Replicator handle (Start, Stop, Status) for the CLI and the mobile layer.
// A replication is a pipeline under one errgroup with bounded channels:
// changes reader -> revs_diff -> fetch workers (_bulk_get, or open_revs per
// document) -> _bulk_docs writer, documents with attachment bodies being
// streamed to the target with PutDoc as they are read. A first pull into
// an empty target skips revs_diff and takes first-generation revisions
// from the changes feed (include_docs) instead of fetching them again.
// Checkpoints
// (_local/<ReplicationID> on both peers, CouchDB's replication log format)
// record the last sequence below which every change is written, even when
// batches finish out of order; sequences are opaque and never compared.
// Transient errors are retried with backoff; a continuous replication goes
// offline and comes back by itself.
//
// # Failures
//
// Every replication (Replicate, Sync, a Replicator, a Supervisor, the
// mobile layer and the CLI) classifies a failed step the same way, as
// CouchDB's replicator does (internal/failure):
//
//	failure                                   kind       one-shot                   continuous
//	----------------------------------------  ---------  -------------------------  ------------------------------
//	connection refused or reset, DNS,         transient  retried up to              StateOffline, backoff,
//	  timeout, body cut short                            Options.Retries times,     new session from the
//	408, 429 (Retry-After honoured), 5xx                 then the error (the CLI    checkpoint; never ends
//	  (500 timeout, write_quorum_not_met,                exits 3)                   by itself
//	  503 all workers died)
//	412 nodedown (a cluster node down or in
//	  maintenance mode)
//	a garbled or truncated answer
//	401 unauthorized, 403 forbidden           until new  StateUnauthorized (the     StateUnauthorized; a Supervisor
//	                                          creds      CLI exits 4)               whose remote is a Reauthorizer
//	                                                                                (a token provider) resumes as
//	                                                                                soon as the token changes
//	404 database does not exist, 400 bad      permanent  StateError (the CLI exits  StateError with the reason
//	  request we sent, other 4xx, TLS                    5, 1 or 3 for TLS)
//	  certificates refused, unknown errors
//
// Backoff doubles from Options.RetryDelay up to MaxRetryDelay with jitter;
// a continuous replication resets it once a session made progress. A 404
// for a replication log that the other peer's log says was written is
// read again (a cluster node may have missed it) before it counts as
// missing, and a replication never starts over from 0 for it while the
// other log is consistent.
package sync
