// Package mobile is what an Android or iOS app calls, through
// `gomobile bind`: a thin facade over the local store (localdb) and the
// replicator (sync).
//
// Only types gomobile can bind cross the boundary: string, []byte, bool,
// int64, float64, error, pointers to this package's structs and this
// package's interfaces. Documents, options and events travel as JSON
// strings in CouchDB's shapes. App services (change listeners, conflict
// resolvers, token providers, loggers) are interfaces the app implements.
//
// Every entry point recovers panics and returns them as errors. Callbacks
// into the app arrive on arbitrary threads (Go goroutines), never on the UI
// thread: hop to the main thread before touching views.
package mobile
