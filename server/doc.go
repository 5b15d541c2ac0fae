package server

// What the server answers (CouchDB 3 shapes, status codes and error bodies
// {"error": ..., "reason": ...}):
//
//	GET|HEAD /                        welcome, version, uuid
//	GET /_up, /_all_dbs, /_uuids?count=N
//	POST|GET|DELETE /_session         cookie sessions (AuthSession, HMAC-signed, expiring)
//	HEAD|GET|PUT|DELETE /{db}         info, create, delete; POST /{db} creates a doc
//	GET|POST /{db}/_changes           feed=normal|longpoll|continuous, since (N or now),
//	                                  limit, descending, style=all_docs, include_docs,
//	                                  conflicts, heartbeat, timeout,
//	                                  filter=_doc_ids|_selector|_design
//	POST /{db}/_revs_diff, _bulk_docs (new_edits true|false), _bulk_get (JSON or
//	                                  multipart/mixed), _ensure_full_commit, _compact
//	GET|POST /{db}/_all_docs          keys, startkey/endkey, limit, skip, descending,
//	                                  include_docs, conflicts, inclusive_end
//	GET|PUT /{db}/_revs_limit
//	POST /{db}/_find, _explain        Mango queries on json indexes (package localdb/query)
//	GET|POST /{db}/_index, DELETE /{db}/_index/{ddoc}/json/{name}
//	GET|PUT|DELETE /{db}/_local/{id}
//	GET|HEAD|PUT|DELETE /{db}/{docid} rev, revs, revs_info, open_revs (JSON or
//	                                  multipart/mixed), latest, conflicts,
//	                                  deleted_conflicts, attachments, atts_since,
//	                                  local_seq, new_edits=false; multipart/related
//	                                  uploads and (Accept) downloads
//	GET|HEAD|PUT|DELETE /{db}/{docid}/{name}  attachments, streamed both ways
//
// Sequences are integers. Filter functions in design documents, views
// and _security are not served (400 or 404).
