package server

// viewGaps are the exchanges of testdata/couchdb35-extra/views.jsonl that
// Settee does not answer like CouchDB 3.5 yet, as couchDBGaps lists others.
var viewGaps = map[string][]string{
	"Filtered feeds (issue 39): a filter that throws or does not compile leaves the document out (CouchDB answers 500); style=all_docs lists every leaf of a passing document; filter=_view without a slash is a 400 (CouchDB crashes with a 500); last_seq of a feed cut by limit and pending follow the deliberate differences of couchDBDifferenceReasons.": {
		"couchdb35-extra/views#214", "couchdb35-extra/views#280", "couchdb35-extra/views#281", "couchdb35-extra/views#284", "couchdb35-extra/views#285", "couchdb35-extra/views#287", "couchdb35-extra/views#289",
		"couchdb35-extra/views#299", "couchdb35-extra/views#301",
		"couchdb35-extra/views#302", "couchdb35-extra/views#305", "couchdb35-extra/views#314",
	},
	"Object keys of views collate by sorted member names (the Mango key encoding), CouchDB's by member order (issue 39).": {
		"couchdb35-extra/views#125", "couchdb35-extra/views#126", "couchdb35-extra/views#127", "couchdb35-extra/views#132", "couchdb35-extra/views#326", "couchdb35-extra/views#347",
		"couchdb35-extra/views#380", "couchdb35-extra/views#409", "couchdb35-extra/views#573", "couchdb35-extra/views#620", "couchdb35-extra/views#680",
	},
	"A view's update_seq is the last store sequence that changed its rows, as in CouchDB, but this corpus's store sequences run one or more behind CouchDB's by then (issue 39).": {
		"couchdb35-extra/views#58", "couchdb35-extra/views#59", "couchdb35-extra/views#337", "couchdb35-extra/views#338", "couchdb35-extra/views#353", "couchdb35-extra/views#367",
		"couchdb35-extra/views#372", "couchdb35-extra/views#374", "couchdb35-extra/views#381", "couchdb35-extra/views#418", "couchdb35-extra/views#434", "couchdb35-extra/views#439",
		"couchdb35-extra/views#448", "couchdb35-extra/views#464", "couchdb35-extra/views#475", "couchdb35-extra/views#481", "couchdb35-extra/views#499", "couchdb35-extra/views#522",
		"couchdb35-extra/views#557", "couchdb35-extra/views#564", "couchdb35-extra/views#566", "couchdb35-extra/views#571", "couchdb35-extra/views#575", "couchdb35-extra/views#585",
		"couchdb35-extra/views#587", "couchdb35-extra/views#588", "couchdb35-extra/views#607", "couchdb35-extra/views#619", "couchdb35-extra/views#663", "couchdb35-extra/views#670",
		"couchdb35-extra/views#677", "couchdb35-extra/views#692", "couchdb35-extra/views#693", "couchdb35-extra/views#695", "couchdb35-extra/views#703",
	},
	"View answers that still differ (issue 39): _info's signature and collator, _all_docs/queries, _design_docs descending offset, reduce_limit, the value _sum and _stats name for strings, _stats of strings with reduce=false, an object reason of forbidden, QuickJS's message for a validate_doc_update that does not compile.": {
		"couchdb35-extra/views#170", "couchdb35-extra/views#171", "couchdb35-extra/views#175", "couchdb35-extra/views#182", "couchdb35-extra/views#195", "couchdb35-extra/views#218",
		"couchdb35-extra/views#221", "couchdb35-extra/views#224", "couchdb35-extra/views#225", "couchdb35-extra/views#259", "couchdb35-extra/views#454", "couchdb35-extra/views#497",
		"couchdb35-extra/views#501", "couchdb35-extra/views#636", "couchdb35-extra/views#646",
	},
}

func init() {
	for reason, keys := range viewGaps {
		for _, k := range keys {
			couchDBDifferences[k] = reason
		}
	}
}
