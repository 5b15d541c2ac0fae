package sync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/localdb/validate"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/synctest"
)

// TestPullValidatedLocally: a store whose app turned validation on
// refuses, in a pull, the revisions its validate_doc_update refuses for
// its writer: each is a doc_write_failure and a doc_failure event, as
// CouchDB's replicator counts them, and every other one is written.
func TestPullValidatedLocally(t *testing.T) {
	ctx := context.Background()
	src := localdbtest.OpenNamed(t, "src", nil)
	for i := range 30 {
		body := fmt.Sprintf(`{"n":%d}`, i)
		if i%6 == 0 {
			body = fmt.Sprintf(`{"n":%d,"owner":"eve"}`, i)
		}
		synctest.Put(t, src, fmt.Sprintf("d%02d", i), "", body)
	}
	dst := localdbtest.OpenNamed(t, "dst", nil)
	vdu := `function (newDoc, oldDoc, userCtx) {
		if (newDoc.owner && newDoc.owner !== userCtx.name) throw({forbidden: 'not yours: ' + newDoc._id});
	}`
	b, _ := json.Marshal(map[string]string{"validate_doc_update": vdu})
	synctest.Put(t, dst, "_design/owners", "", string(b))
	v := validate.New(nil)
	defer v.Close()
	dst.SetWriteCheck(v.WriteCheck(&validate.WriteContext{DB: "dst", UserName: "ann", Roles: []string{"editor"}}))

	var failed []string
	res, err := sync.Replicate(synctest.Ctx(t), sync.Options{Source: synctest.Local(src), Target: synctest.Local(dst), BatchSize: 7,
		OnEvent: func(e sync.Event) {
			if e.Kind == sync.EventDocFailure && e.Doc != nil {
				if !couchdocIsForbidden(e.Doc.Err) {
					t.Errorf("%s failed with %v, want forbidden", e.Doc.ID, e.Doc.Err)
				}
				failed = append(failed, e.Doc.ID)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.DocsWritten != 25 || res.Stats.DocWriteFailures != 5 || len(failed) != 5 {
		t.Fatalf("stats %+v, failures %v", res.Stats, failed)
	}
	for i := range 30 {
		_, err := dst.Get(ctx, fmt.Sprintf("d%02d", i), localdb.GetOptions{})
		if refused := i%6 == 0; refused != (couchdoc.StatusOf(err) == 404) {
			t.Errorf("d%02d: %v (refused: %v)", i, err, refused)
		}
	}

	// The same pull into a store without the check takes everything, as
	// PouchDB does.
	plain := localdbtest.OpenNamed(t, "plain", nil)
	synctest.Put(t, plain, "_design/owners", "", string(b))
	res, err = sync.Replicate(synctest.Ctx(t), sync.Options{Source: synctest.Local(src), Target: synctest.Local(plain)})
	if err != nil || res.Stats.DocsWritten != 30 || res.Stats.DocWriteFailures != 0 {
		t.Fatalf("unchecked pull: %+v %v", res, err)
	}
}

func couchdocIsForbidden(err error) bool { return couchdoc.StatusOf(err) == 403 }
