// Package server serves a device's local store over CouchDB's HTTP API, so
// Apache CouchDB's replicator, PouchDB and Settee's own sync package can
// replicate to and from it as with any CouchDB. It is an http.Handler over
// localdb databases plus a ListenAndServe entry point that is safe by
// default: loopback only unless users are configured, optional TLS, and a
// graceful shutdown that ends continuous feeds.
package server

// What the server answers (CouchDB 3 shapes, status codes and error bodies
// {"error": ..., "reason": ...}):
//
//	GET|HEAD /                        welcome, version, uuid
//	GET /_up, /_all_dbs, /_uuids?count=N
//	POST|GET|DELETE /_session         cookie sessions (AuthSession, HMAC-signed, expiring)
//	HEAD|GET|PUT|DELETE /{db}         info, create, delete; POST /{db} creates a doc
//	GET|POST /{db}/_changes           feed=normal|longpoll|continuous|eventsource, since
//	                                  (N or now), limit, descending, style=all_docs,
//	                                  include_docs (attachments=true), conflicts,
//	                                  heartbeat, timeout, filter=_doc_ids|_selector|_design
//	POST /{db}/_revs_diff, _bulk_docs (new_edits true|false), _bulk_get (JSON or
//	                                  multipart/mixed), _ensure_full_commit, _compact
//	GET|POST /{db}/_all_docs          keys, startkey/endkey, limit, skip, descending,
//	                                  include_docs, conflicts, inclusive_end, update_seq;
//	                                  _design_docs, _local_docs
//	GET|PUT /{db}/_revs_limit
//	POST /{db}/_purge, GET /{db}/_purged_infos, GET|PUT /{db}/_purged_infos_limit
//	POST /{db}/_find, _explain        Mango queries on json indexes (package localdb/query)
//	GET|POST /{db}/_index, DELETE /{db}/_index/{ddoc}/json/{name}
//	GET|PUT|DELETE /{db}/_local/{id}  no revision check, as CouchDB
//	GET|HEAD|PUT|DELETE|COPY /{db}/{docid}  rev, revs, revs_info, open_revs (JSON or
//	                                  multipart/mixed: attachment bodies follow, as
//	                                  CouchDB), latest, conflicts, deleted_conflicts,
//	                                  attachments, atts_since, local_seq,
//	                                  new_edits=false; multipart/related uploads and
//	                                  downloads (Accept negotiated as CouchDB does)
//	GET|HEAD|PUT|DELETE /{db}/{docid}/{name}  attachments, streamed both ways, one
//	                                  byte range per request
//	GET|POST /{db}/_design/{ddoc}/_view/{view}[/queries], GET .../_info,
//	POST /{db}/_view_cleanup          JavaScript map/reduce views (localdb/query)
//
// JavaScript design functions run in a sandboxed QuickJS (internal/jsfunc):
// views, validate_doc_update on every write (localdb/validate, with the
// request's user and the database's _security) and filter=ddoc/name and
// filter=_view on _changes (localdb/filter). Shows, lists, updates and
// rewrites are refused.
//
// Every exchange of CouchDB 3.5's recorded answers (testdata/couchdb35) is
// replayed against this server by couchdb35_test.go; what deliberately
// differs is listed once, with the reasons, in couchdb35_diffs_test.go:
// sequences are integers, no shows, lists or updates, users come from the
// configuration and are admins, attachments are stored as sent (CouchDB
// gzips text ones).
