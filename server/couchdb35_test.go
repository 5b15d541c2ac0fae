package server

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/settee/settee/internal/couchcorpus"
)

// corpusUsers are the users of the replays: the corpus masks CouchDB's
// credentials, so these stand in for them.
var corpusUsers = map[string]string{"admin": "adminpw", "corpus_user": "userpw", "corpus_other": "otherpw"}

// corpusStep is a dataset to load into a database, or an exchanges file
// of the corpus to replay.
type corpusStep struct {
	load, db string
	file     string
	// floatTolerance is the file's couchcorpus.Options.FloatTolerance.
	floatTolerance float64
}

// replayCorpus replays the steps against a fresh server and checks every
// answer against CouchDB 3.5's, less the differences listed in
// couchDBDifferences (which must each still differ).
func replayCorpus(t *testing.T, steps []corpusStep) {
	// Only the admin is configured: the corpus creates the other users in
	// _users, as it did on CouchDB. Few PBKDF2 rounds keep the replay fast.
	ts := newTServer(t, Config{Users: map[string]string{"admin": corpusUsers["admin"]}, PasswordIterations: 10})
	ctx := context.Background()
	admin := func(r *http.Request) { r.SetBasicAuth("admin", corpusUsers["admin"]) }
	rp := &couchcorpus.Replayer{
		Base:    ts.url,
		Options: couchcorpus.Options{IdentityAttachments: true, OwnBadRequestReasons: true},
		Unmask:  unmaskPassword,
	}
	for _, st := range steps {
		if st.load != "" {
			if err := couchcorpus.LoadDataset(ctx, http.DefaultClient, ts.url, st.db, st.load, admin); err != nil {
				t.Fatal(err)
			}
			continue
		}
		ex, err := couchcorpus.ReadExchanges(st.file)
		if err != nil {
			t.Fatal(err)
		}
		rp.Options.FloatTolerance = st.floatTolerance
		file := strings.TrimSuffix(st.file, ".jsonl")
		rp.Auth = func(r *http.Request) { corpusAuth(file, r) }
		rp.Run(ctx, ex, func(res couchcorpus.Result) {
			e := res.Exchange
			key := file + "#" + strconv.Itoa(e.Seq)
			diffs := res.Diffs
			if res.Err != nil {
				diffs = append(diffs, res.Err.Error())
			}
			if reason, ok := couchDBDifferences[key]; ok {
				if len(diffs) == 0 {
					t.Errorf("%s (%s %s) now answers like CouchDB: remove it from couchDBDifferences (%q)", key, e.Method, e.Path, reason)
				}
				return
			}
			if len(diffs) > 0 {
				t.Errorf("%s %s %s?%s (%s):\n\t%s", key, e.Method, e.Path, e.Query, e.Note, strings.Join(diffs, "\n\t"))
				if os.Getenv("CORPUS_VERBOSE") != "" && res.Got != nil {
					t.Logf("sent %s\ngot %d %v\n%.3000s", res.Got.Request, res.Got.Status, res.Got.Header, res.Got.Body)
				}
			}
		})
	}
}

var maskedName = regexp.MustCompile(`name"?\s*[:=]\s*"?([a-z_]+)`)

// unmaskPassword puts the stand-in password of the user a login body names
// in place of the corpus's "<masked>".
func unmaskPassword(_ *couchcorpus.Exchange, body []byte) []byte {
	name := "admin"
	if m := maskedName.FindSubmatch(body); m != nil {
		name = string(m[1])
	}
	return bytes.ReplaceAll(body, []byte("<masked>"), []byte(corpusUsers[name]))
}

// corpusAuth sets the credentials CouchDB's clients used: the admin,
// except in the scripted authorization requests, whose notes say who.
func corpusAuth(file string, r *http.Request) {
	user := "admin"
	if file == "requests" {
		switch seq := seqOf(r); {
		case seq == 282:
			r.SetBasicAuth("corpus_user", "wrong")
			return
		case seq == 283:
			r.SetBasicAuth("nobody", "wrong")
			return
		case seq == 290:
			user = "corpus_other"
		case seq >= 284 && seq <= 299:
			user = "corpus_user"
		}
	}
	r.SetBasicAuth(user, corpusUsers[user])
}

// seqOf reads the exchange number the replay put in the request.
func seqOf(r *http.Request) int {
	n, _ := strconv.Atoi(r.Header.Get("X-Corpus-Seq"))
	return n
}

// TestCouchDB35Requests replays the corpus's script of single requests.
func TestCouchDB35Requests(t *testing.T) {
	t.Parallel()
	replayCorpus(t, []corpusStep{
		{load: "dataset.ndjson", db: "corpus_req"},
		{file: "requests.jsonl"},
	})
}

// TestCouchDB35Source replays what CouchDB's replicator and PouchDB asked of
// a source database: a first pull, PouchDB's pull, an incremental pull and
// a continuous one with writes during it.
func TestCouchDB35Source(t *testing.T) {
	t.Parallel()
	replayCorpus(t, []corpusStep{
		{load: "dataset.ndjson", db: "corpus_src"},
		{file: "replicator-pull-from-source.jsonl"},
		{file: "pouchdb-pull.jsonl"},
		{load: "dataset-incremental.ndjson", db: "corpus_src"},
		{file: "replicator-incremental.jsonl"},
		{file: "replicator-continuous.jsonl"},
	})
}

// TestCouchDB35Target replays what CouchDB's replicator and PouchDB sent to
// a target database they created: a first push, an incremental one, and
// PouchDB's push.
func TestCouchDB35Target(t *testing.T) {
	t.Parallel()
	replayCorpus(t, []corpusStep{
		{file: "replicator-push-to-target.jsonl"},
		{file: "replicator-incremental-push.jsonl"},
		{file: "pouchdb-push.jsonl"},
	})
}

// TestCouchDB35Purge replays CouchDB 3.5's recorded answers to _purge and
// _purged_infos_limit (testdata/couchdb35-extra).
func TestCouchDB35Purge(t *testing.T) {
	t.Parallel()
	replayCorpus(t, []corpusStep{
		{load: "dataset.ndjson", db: "corpus_purge"},
		{file: "couchdb35-extra/purge.jsonl"},
	})
}

// TestCouchDB35BulkDocs replays CouchDB 3.5's recorded answers to
// new_edits=false batches that name a document more than once: one new
// sequence per document, its revisions merged before the tree is stemmed
// (testdata/couchdb35-extra).
func TestCouchDB35BulkDocs(t *testing.T) {
	t.Parallel()
	replayCorpus(t, []corpusStep{
		{load: "dataset.ndjson", db: "corpus_bulkdocs"},
		{file: "couchdb35-extra/bulkdocs.jsonl"},
	})
}

// TestCouchDB35Find replays CouchDB 3.5's recorded answers to _index,
// _find and _explain over the corpus dataset (testdata/couchdb35-extra).
func TestCouchDB35Find(t *testing.T) {
	t.Parallel()
	replayCorpus(t, []corpusStep{
		{load: "dataset.ndjson", db: "corpus_find"},
		{file: "couchdb35-extra/find.jsonl"},
	})
}

// TestCouchDB35Clients replays CouchDB 3.5.0's recorded answers to what
// PouchDB and web apps send beyond replication (testdata/couchdb35-extra/
// clients.json): _all_docs with attachments=true, inline attachment data
// replacing a stated digest, _local documents and attachments, attachment
// names and special members CouchDB refuses or keeps, empty ids, mixed
// index directions, escaped Mango field names, _selector and _view
// filters and design functions that are missing.
func TestCouchDB35Clients(t *testing.T) {
	t.Parallel()
	replayCorpus(t, []corpusStep{
		{load: "dataset.ndjson", db: "corpus_clients"},
		{file: "couchdb35-extra/clients.jsonl"},
	})
}

// TestCouchDB35RevIDs replays CouchDB 3.5's answers to revision ids that
// are not hex (1-x, 1-, 2-import42) in _bulk_docs, GET, _revs_diff,
// open_revs and _bulk_get (testdata/couchdb35-extra/revids.jsonl).
func TestCouchDB35RevIDs(t *testing.T) {
	t.Parallel()
	replayCorpus(t, []corpusStep{
		{load: "dataset.ndjson", db: "corpus_revids"},
		{file: "couchdb35-extra/revids.jsonl"},
	})
}
