// Package couch is a sync.Peer over HTTP: a CouchDB client for one
// database URL, speaking the replication protocol's endpoints (_changes,
// _revs_diff, open_revs, _bulk_get, _bulk_docs, multipart PUT, _local docs).
//
// It streams: changes rows, fetched documents and attachment bodies are
// handed to callbacks one at a time, and PutDoc streams attachment bodies
// through an io.Pipe. It keeps a pool of keep-alive connections and never
// puts credentials in errors, logs or String().
//
// By default each request is sent once (and again only after renewing
// credentials on a 401): the replicator owns retries (sync.Options.Retries),
// and a second loop here would multiply its attempts. Callers that use a
// DB on its own set Options.Retries; what is worth retrying is
// IsRetryable's classification, the replicator's too.
package couch
