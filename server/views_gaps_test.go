package server

// viewGaps are the exchanges of testdata/couchdb35-extra/views.jsonl that
// Settee does not answer like CouchDB 3.5 yet, as couchDBGaps lists others.
var viewGaps = map[string][]string{
	"_info's signature is an MD5 of Settee's own encoding of the view functions (CouchDB's hashes its Erlang terms), collator_versions is empty (Settee's collation is its own, not ICU's) and waiting_commit is false (nothing is left to commit).": {
		"couchdb35-extra/views#175", "couchdb35-extra/views#195",
	},
	"reduce_limit is not enforced: a JavaScript reduce whose output does not shrink is answered, where CouchDB gives the row a reduce_overflow_error.": {
		"couchdb35-extra/views#218",
	},
}

func init() {
	for reason, keys := range viewGaps {
		for _, k := range keys {
			couchDBDifferences[k] = reason
		}
	}
}
