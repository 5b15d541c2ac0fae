package server

// The deliberate differences between Settee's server and Apache CouchDB
// 3.5, each with the reason a CouchDB user would accept, and the corpus
// exchanges (testdata/couchdb35, file#seq) where they show. The replay
// tests fail on any other difference, and on a listed exchange that no
// longer differs. README.md ("Which servers") sums these up.
//
// Two more are normalizations of every comparison, named where the
// replays set their couchcorpus.Options: attachments are stored as sent
// (CouchDB gzips text/* and JSON on write, so its digests of those are of
// gzip bytes and its answers gzip-encoded), and a 400's reason is our own
// diagnostic (the status and error name must match).
var couchDBDifferenceReasons = map[string][]string{
	"GET / names Settee and its version, not CouchDB's git_sha, and lists only the features it has (server.Features): a client must not take it for CouchDB 3.5 (CouchDB's replicator and PouchDB read only `couchdb`).": {
		"requests#1", "requests#277", "pouchdb-pull#2", "pouchdb-push#3",
		"couchdb35-extra/auth#1", "couchdb35-extra/auth#239", "couchdb35-extra/auth#329", "couchdb35-extra/auth#373", "couchdb35-extra/auth#417", "couchdb35-extra/auth#461", "couchdb35-extra/auth#505", "couchdb35-extra/auth#547",
	},
	"The rules of _users documents are Go code, not a _design/_auth document (its validate_doc_update): _users holds one document less.": {
		"couchdb35-extra/auth#39", "couchdb35-extra/auth#41", "couchdb35-extra/auth#46",
	},
	"A token's nbf (not before) is honoured: a token not yet valid is refused with 401 \"nbf not in past\" (CouchDB checks nbf only when [jwt_auth] required_claims names it).": {
		"couchdb35-extra/auth#136",
	},
	"Where CouchDB 3.5 crashes on a refusal (500: a member writing _security, _index or _revs_limit; a _security object, login body or token header it cannot read), the refusal is answered as such: 403 forbidden \"You are not a db or server admin.\", 401, or 400 bad_request.": {
		"couchdb35-extra/auth#81", "couchdb35-extra/auth#83", "couchdb35-extra/auth#156", "couchdb35-extra/auth#168", "couchdb35-extra/auth#174", "couchdb35-extra/auth#175", "couchdb35-extra/auth#177", "couchdb35-extra/auth#178", "couchdb35-extra/auth#179", "couchdb35-extra/auth#180", "couchdb35-extra/auth#181", "couchdb35-extra/auth#191", "couchdb35-extra/auth#351", "couchdb35-extra/auth#366", "couchdb35-extra/auth#395", "couchdb35-extra/auth#410",
	},
	"A changes feed lists a database's changes in the order they were made; a CouchDB database of two shards (q=2, the default) lists one shard's, then the other's.": {
		"couchdb35-extra/auth#341", "couchdb35-extra/auth#385", "couchdb35-extra/auth#429", "couchdb35-extra/auth#473", "couchdb35-extra/auth#517", "couchdb35-extra/auth#670",
	},
	"_active_tasks lists this server's tasks: it runs no background compaction or indexing, which CouchDB's listed when it was recorded.": {
		"couchdb35-extra/auth#550",
	},
	"Recorded twice a minute apart, CouchDB still held the first run's failed logins of carol (the lockout lasts five minutes) when her document had lost its password hash; a fresh server refuses the login as a wrong password (401), not a lockout.": {
		"couchdb35-extra/auth#717",
	},
	"No _shards: a store is one file, not shards on nodes.": {
		"couchdb35-extra/auth#368", "couchdb35-extra/auth#412", "couchdb35-extra/auth#456", "couchdb35-extra/auth#500", "couchdb35-extra/auth#544", "couchdb35-extra/auth#697",
	},
	"JavaScript runs for views, validate_doc_update and filters only: shows, lists and updates are refused with 400 bad_request, and a missing design doc or function still answers CouchDB's 404.": {
		"requests#268", "requests#269", "requests#271",
	},
	"The corpus's users had been created and deleted eight times on that CouchDB before it was recorded, so its user documents are at generation 9 where a fresh server's are at 1.": {
		"requests#272", "requests#273",
	},
	"A non-admin writing _security gets 403 forbidden (\"You are not a db or server admin.\"), the answer CouchDB's own check gives; CouchDB 3.5's cluster layer turns that refusal into 500 no_majority.": {
		"requests#289",
	},
	"A _security change moves update_seq once; CouchDB moves it once per shard (q=2 by default), so its counts after one are one higher.": {
		"requests#284", "requests#296",
	},
	"A revision generation above 2^31-1 is refused (400 bad_request) where CouchDB takes any integer: the store's trees hold 32-bit generations, so that gomobile's 32-bit platforms read them; a replication fails that one document alone. No client makes such generations (it takes 2^31 edits).": {
		"couchdb35-extra/revids#41",
	},
	"Sequences are integers, so since=<integer> is accepted (CouchDB 3 refuses a bare integer: its sequences are opaque strings). Every client passes back the sequences the server sent.": {
		"requests#119", "couchdb35-extra/purge#18",
	},
	"A normal feed's last_seq is the update sequence, where CouchDB's is the last document's (they differ after a purge or a settings change, which move update_seq alone). Sequences are opaque to clients either way.": {
		"couchdb35-extra/purge#39",
	},
	"pending of a filtered or descending feed is the number of changes after last_seq, what a client can still read; CouchDB's is not (295 for a _doc_ids feed that ended at the last seq).": {
		"requests#112", "requests#113", "requests#115", "requests#122", "requests#123", "requests#124", "requests#130",
		"couchdb35-extra/views#301", "couchdb35-extra/views#302",
	},
	"A filtered feed cut by limit ends at the last row sent; CouchDB's last_seq is the next change it looked at (and a descending one's pending follows as above). Resuming from either gives the same rows.": {
		"requests#126",
		"couchdb35-extra/views#280", "couchdb35-extra/views#281", "couchdb35-extra/views#285", "couchdb35-extra/views#287", "couchdb35-extra/views#289",
	},
	"seq_interval is a hint to spare CouchDB encoding its sequences: every row carries its (integer) seq.": {
		"requests#121",
	},
	"Several byte ranges in one request get the whole attachment (200), which HTTP allows; one range gets 206.": {
		"requests#175",
	},
	"Attachments are stored as sent, so a text attachment answers a Range like any other (CouchDB stores it gzipped and ignores Range).": {
		"requests#180",
	},
	"Malformed input is a 400 bad_request, where CouchDB 3.5 crashes with a 500 (_revs_diff with a non-list value, a _local doc with a non-local rev, filter=_view with a view name without a slash).": {
		"requests#145", "requests#227",
		"couchdb35-extra/views#299",
	},
	"A filter function that throws or does not compile ends the feed with a 500 named for what it threw, whose reason is its message; CouchDB's is `error` with an Erlang term holding its stack trace, or the thrown name with the message lost (`{[]}`).": {
		"couchdb35-extra/views#214", "couchdb35-extra/views#305", "couchdb35-extra/views#314",
	},
	"Built-in reduces run when a query reduces: a view whose _sum or _stats meets a string names the first such value in key order (CouchDB names one in its B-tree's order), and its rows are still served with reduce=false (CouchDB reduces as it writes the index, so every query of it fails with a 500).": {
		"couchdb35-extra/views#221", "couchdb35-extra/views#224", "couchdb35-extra/views#225",
	},
	"A validator that throws its arguments back as a string shows a text attachment's digest and the revisions holding it as Settee stores them, of the bytes as sent (CouchDB's are of the gzip it stores: the normalization of attachments above cannot reach inside a string).": {
		"couchdb35-extra/vdu-users#20",
	},
	"Error parts of a multipart _bulk_get name the id in every case; CouchDB leaves it out when the document exists but the revision does not.": {
		"requests#98", "requests#101",
	},
}

// couchDBGaps are differences that are not deliberate: what Settee does
// not answer like CouchDB 3.5 yet. They are listed so that the replay
// passes while they are open, and fails once they are fixed, like the
// deliberate ones.
var couchDBGaps = map[string][]string{
	"GET /_dbs_info over every database compares their info field by field: CouchDB's opaque sequences and its _users design document (doc_count) are not normalized there yet.": {
		"couchdb35-extra/auth#551",
	},
}

// couchDBDifferences indexes couchDBDifferenceReasons and couchDBGaps by
// exchange.
var couchDBDifferences = func() map[string]string {
	m := map[string]string{}
	for _, table := range []map[string][]string{couchDBDifferenceReasons, couchDBGaps} {
		for reason, keys := range table {
			for _, k := range keys {
				m[k] = reason
			}
		}
	}
	return m
}()
