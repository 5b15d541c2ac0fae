package server

// couchDBDifferences lists the exchanges of the CouchDB 3.5 corpus where
// Settee's server deliberately answers differently, with the reason.
var couchDBDifferences = map[string]string{}
