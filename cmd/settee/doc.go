// Command settee drives Settee from a shell: it looks into and edits a local
// store, serves it over the CouchDB HTTP API, replicates it with a CouchDB
// server (pull, push, sync), and runs a self-contained demo.
//
// Run `settee help` for the commands and `settee COMMAND --help` for each.
package main
