package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/settee/settee/internal/testutil"
)

// TestCouchDBHubJobs has the hub keep a database in step with a real
// CouchDB 3.5 both ways through two continuous _replicator documents, as
// a field hub with its cloud; deleting the push document stops the push
// (opt-in: SETTEE_COUCHDB_URL).
func TestCouchDBHubJobs(t *testing.T) {
	c := liveCouch(t)
	ts := newReplHub(t, Config{})
	db := fmt.Sprintf("settee_hubjobs_%d", time.Now().UnixNano())
	couchCall(t, c, "PUT", "/"+db, nil, nil, 201)
	t.Cleanup(func() { couchCall(t, c, "DELETE", "/"+db, nil, nil, 200) })
	cloud := c.String() + "/" + db
	ts.must(201, "PUT", "/hub", nil)
	ts.must(201, "PUT", "/_replicator/push", map[string]any{"source": ts.dbURL("hub"), "target": cloud, "continuous": true})
	ts.must(201, "PUT", "/_replicator/pull", map[string]any{"source": cloud, "target": ts.dbURL("hub"), "continuous": true})
	for i := range 20 {
		ts.putDoc("hub", fmt.Sprintf("h%02d", i), map[string]any{"n": i})
		couchCall(t, c, "PUT", fmt.Sprintf("/%s/c%02d", db, i), map[string]any{"n": i}, nil, 201)
	}
	cloudCount := func() float64 {
		var info struct {
			DocCount float64 `json:"doc_count"`
		}
		couchCall(t, c, "GET", "/"+db, nil, &info, 200)
		return info.DocCount
	}
	testutil.Eventually(t, "both sides have the 40 documents", func() bool { return ts.docCount("hub") == 40 && cloudCount() == 40 })
	for _, id := range []string{"push", "pull"} {
		if d := ts.schedDoc(id); d["state"] != "running" {
			t.Errorf("%s: %v", id, d)
		}
	}
	rev := ts.must(200, "GET", "/_replicator/push", nil).json(t)["_rev"].(string)
	ts.must(200, "DELETE", "/_replicator/push?rev="+rev, nil)
	testutil.Eventually(t, "the push job is gone", func() bool { return ts.schedDoc("push") == nil })
	ts.putDoc("hub", "after", map[string]any{"n": 99})
	couchCall(t, c, "PUT", "/"+db+"/cloud-after", map[string]any{"n": 99}, nil, 201)
	testutil.Eventually(t, "the pull goes on", func() bool { return ts.docCount("hub") == 42 })
	if n := cloudCount(); n != 41 {
		t.Errorf("CouchDB has %v documents after the push stopped, want 41", n)
	}
}
