package server

import "testing"

// TestCouchDB35Views replays CouchDB 3.5.0's recorded answers on
// JavaScript design functions (testdata/couchdb35-extra/views.jsonl):
// views with every option, _info, _view_cleanup; the validate_doc_update
// and filter exchanges not served yet are listed in couchDBGaps.
func TestCouchDB35Views(t *testing.T) {
	t.Parallel()
	replayCorpus(t, []corpusStep{
		{load: "dataset.ndjson", db: "corpus_views"},
		{file: "couchdb35-extra/views.jsonl", floatTolerance: 1e-12},
	})
}

// TestCouchDB35ViewsRandom replays 2,000 more seeded random view queries
// answered by CouchDB 3.5.0 (testdata/couchdb35-extra/views-random.jsonl).
func TestCouchDB35ViewsRandom(t *testing.T) {
	t.Parallel()
	replayCorpus(t, []corpusStep{
		{load: "dataset.ndjson", db: "corpus_views_random"},
		{file: "couchdb35-extra/views-random.jsonl", floatTolerance: 1e-9},
	})
}
