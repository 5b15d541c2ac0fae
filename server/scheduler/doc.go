// Package scheduler runs the replications a hub keeps by itself, as
// CouchDB 3.5's couch_replicator scheduler: one job per document of the
// _replicator database (and per POST /_replicate), each a sync.Supervisor
// between two HTTP endpoints, started when its document is written,
// stopped when it is deleted or changed, resumed from its checkpoints
// after a restart, restarted with backoff after it crashed, and reported
// in CouchDB's shapes (_scheduler/jobs, _scheduler/docs, _active_tasks).
//
// The scheduler knows nothing of the server: it reads the replication
// documents through Docs, and the server asks it for reports.
package scheduler
