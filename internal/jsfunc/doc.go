// Package jsfunc runs the JavaScript functions of CouchDB design
// documents: map and reduce functions of views, validate_doc_update and
// filters. The engine is QuickJS (modernc.org/quickjs, pure Go: no cgo, so
// the mobile and cross-compiled builds keep working), the engine CouchDB
// 3.5 itself runs; bench/RESULTS.md has the comparison that chose it.
//
// A Runtime is one engine instance with CouchDB's query-server globals
// (emit, log, sum, toJSON, isArray, require of CommonJS modules). It has
// no access to files, the network or the process: the engine is built
// without QuickJS's std and os modules and nothing else is registered.
// Each call runs under a time limit (CouchDB's os_process_timeout, 5 s by
// default) and the runtime under a memory cap; a call that passes either
// fails with ErrTimeout or ErrMemory and its runtime is closed, since its
// state is no longer known. A function that throws fails with the thrown
// value as CouchDB answers it (*couchdoc.Error: forbidden 403,
// unauthorized 401, others 500).
//
// A Pool keeps idle runtimes, one pool per design document (Pools), so a
// runaway function of one design document never holds another's.
package jsfunc
