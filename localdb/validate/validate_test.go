package validate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/jsfunc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/localdb/validate"
)

var bg = context.Background()

func doc(id, rev, body string) *couchdoc.Doc {
	return &couchdoc.Doc{ID: id, Rev: rev, Body: json.RawMessage(body)}
}

// TestCheckLocalStore: an app that turns validation on gets CouchDB's
// refusals before its writes, with the arguments CouchDB gives.
func TestCheckLocalStore(t *testing.T) {
	db := localdbtest.Open(t)
	v := validate.New(&jsfunc.Options{Timeout: time.Second})
	defer v.Close()
	vdu := `function (newDoc, oldDoc, userCtx, secObj) {
		if (newDoc.reject) throw({forbidden: 'no'});
		if (!userCtx.name) throw({unauthorized: 'log in'});
		if (oldDoc && oldDoc.v >= newDoc.v) throw({forbidden: 'v must grow from ' + oldDoc.v + ' at ' + newDoc._revisions.start});
		if (newDoc._deleted && secObj.admins.roles.indexOf('_admin') < 0) throw({forbidden: 'keep'});
	}`
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "_design/v", Body: mustJSON(t, map[string]any{"validate_doc_update": vdu})}); err != nil {
		t.Fatal(err)
	}
	bob := &validate.WriteContext{DB: "d", UserName: "bob"}
	if err := v.Check(bg, db, doc("a", "", `{"v":1}`), true, bob); err != nil {
		t.Fatalf("accepted write refused: %v", err)
	}
	rev, err := db.Put(bg, doc("a", "", `{"v":1}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		d    *couchdoc.Doc
		wc   *validate.WriteContext
		want *couchdoc.Error
		why  string
	}{
		{doc("b", "", `{"reject":true}`), bob, couchdoc.ErrForbidden, "no"},
		{doc("b", "", `{}`), &validate.WriteContext{DB: "d"}, couchdoc.ErrUnauthorized, "log in"},
		{doc("a", rev, `{"v":1}`), bob, couchdoc.ErrForbidden, "v must grow from 1 at 1"},
		{&couchdoc.Doc{ID: "a", Rev: rev, Deleted: true}, &validate.WriteContext{DB: "d", UserName: "bob", SecObj: json.RawMessage(`{"admins":{"roles":[]}}`)}, couchdoc.ErrForbidden, "keep"},
	}
	for _, c := range cases {
		err := v.Check(bg, db, c.d, true, c.wc)
		var ce *couchdoc.Error
		if !errors.Is(err, c.want) || !errors.As(err, &ce) || ce.Reason != c.why {
			t.Errorf("%s %s: %v, want %s %q", c.d.ID, c.d.Body, err, c.want.Name, c.why)
		}
	}
	// Replicated writes are checked against their parent revision.
	repl := doc("a", "2-abc", `{"v":0}`)
	repl.Revisions = &couchdoc.Revisions{Start: 2, IDs: []string{"abc", rev[2:]}}
	if err := v.Check(bg, db, repl, false, bob); !errors.Is(err, couchdoc.ErrForbidden) {
		t.Errorf("replicated write: %v, want forbidden", err)
	}
	// _local documents are not validated; design documents are checked.
	if err := v.Check(bg, db, doc("_local/x", "", `{"reject":true}`), true, bob); err != nil {
		t.Errorf("_local: %v", err)
	}
	for body, name := range map[string]string{
		`{"views":{"x":{"map":"function (doc) { emit(doc._id, "}}}`:      "compilation_error",
		`{"views":{"x":{"map":"function (doc) {}","reduce":"_median"}}}`: "invalid_design_doc",
		`{"views":{"x":{"reduce":"_count"}}}`:                            "invalid_design_doc",
		`{"validate_doc_update":1}`:                                      "invalid_design_doc",
	} {
		err := v.Check(bg, db, doc("_design/bad", "", body), true, bob)
		var ce *couchdoc.Error
		if !errors.As(err, &ce) || ce.Name != name || ce.Status != 400 {
			t.Errorf("design doc %s: %v, want 400 %s", body, err, name)
		}
	}
	if err := v.Check(bg, db, doc("_design/ok", "", `{"language":"query","views":{"x":{"map":{"fields":{"a":"asc"}}}}}`), true, bob); err != nil {
		t.Errorf("Mango design doc: %v", err)
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWriteCheckRunsValidators: a store given Validator.WriteCheck runs
// its validate_doc_update on its own writes, with the writer ParseUserCtx
// read; replicated revisions the store has are not validated again.
func TestWriteCheckRunsValidators(t *testing.T) {
	db := localdbtest.Open(t)
	v := validate.New(&jsfunc.Options{Timeout: time.Second})
	defer v.Close()
	vdu := `function (newDoc, oldDoc, userCtx, secObj) {
		if (secObj.members.names.indexOf(userCtx.name) < 0) throw({forbidden: userCtx.name + ' is no member of ' + userCtx.db});
		if (newDoc.reject) throw({forbidden: 'no'});
	}`
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "_design/v", Body: mustJSON(t, map[string]any{"validate_doc_update": vdu})}); err != nil {
		t.Fatal(err)
	}
	if _, err := validate.ParseUserCtx([]byte(`{"name": "ann", "secObj": []}`)); !errors.Is(err, couchdoc.ErrBadRequest) {
		t.Fatalf("a secObj that is not an object: %v", err)
	}
	wc, err := validate.ParseUserCtx([]byte(`{"name": "ann", "roles": ["editor"], "db": "tasks", "secObj": {"members": {"names": ["ann"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	db.SetWriteCheck(v.WriteCheck(wc))
	rev, err := db.Put(bg, doc("a", "", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Put(bg, doc("b", "", `{"reject":true}`)); !errors.Is(err, couchdoc.ErrForbidden) {
		t.Fatalf("refused write: %v", err)
	}
	// A revision the store has, replicated again, is accepted as it is,
	// even by a writer the function refuses.
	bob, _ := validate.ParseUserCtx([]byte(`{"name": "bob", "db": "tasks", "secObj": {"members": {"names": ["ann"]}}}`))
	db.SetWriteCheck(v.WriteCheck(bob))
	again, _ := db.Get(bg, "a", localdb.GetOptions{Revs: true})
	c := doc("c", "1-0123456789abcdef0123456789abcdef", `{}`)
	c.Revisions = &couchdoc.Revisions{Start: 1, IDs: []string{"0123456789abcdef0123456789abcdef"}}
	res, err := db.BulkDocs(bg, []*couchdoc.Doc{again, c}, false)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err() != nil || res[0].Rev != rev {
		t.Fatalf("known revision: %+v", res[0])
	}
	if ce, ok := res[1].Err().(*couchdoc.Error); !ok || ce.Reason != "bob is no member of tasks" {
		t.Fatalf("new revision by bob: %+v", res[1])
	}
}

// TestValidatorSeesAttachmentStubs: on an update, newDoc carries the
// parent alone in _revisions, kept attachments as the parent's stubs and
// new ones as stubs with their length and revpos 0, _attachments last
// and each stub's members in CouchDB's order, as CouchDB gives them.
func TestValidatorSeesAttachmentStubs(t *testing.T) {
	db := localdbtest.Open(t)
	v := validate.New(&jsfunc.Options{Timeout: time.Second})
	defer v.Close()
	vdu := `function (newDoc) { if (newDoc.echo) throw({forbidden: JSON.stringify([Object.keys(newDoc), newDoc._revisions, newDoc._attachments])}); }`
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "_design/v", Body: mustJSON(t, map[string]any{"validate_doc_update": vdu})}); err != nil {
		t.Fatal(err)
	}
	rev, err := db.Put(bg, &couchdoc.Doc{ID: "a", Body: json.RawMessage(`{}`),
		Attachments: map[string]*couchdoc.Attachment{"a.txt": {Name: "a.txt", ContentType: "text/plain", Data: []byte("hello")}}})
	if err != nil {
		t.Fatal(err)
	}
	old, err := db.Get(bg, "a", localdb.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	upd := &couchdoc.Doc{ID: "a", Rev: rev, Body: json.RawMessage(`{"echo":true}`), Attachments: map[string]*couchdoc.Attachment{
		"a.txt": {Name: "a.txt", Stub: true},
		"b.txt": {Name: "b.txt", ContentType: "text/plain", Data: []byte("hi")},
	}}
	err = v.Check(bg, db, upd, true, nil)
	var ce *couchdoc.Error
	if !errors.As(err, &ce) {
		t.Fatalf("echo: %v", err)
	}
	var got []json.RawMessage
	if err := json.Unmarshal([]byte(ce.Reason), &got); err != nil || len(got) != 3 {
		t.Fatalf("reason %q: %v", ce.Reason, err)
	}
	gen, hash, _ := couchdoc.ParseRev(rev)
	want := []string{
		`["_id","_rev","echo","_revisions","_attachments"]`,
		fmt.Sprintf(`{"start":%d,"ids":[%q]}`, gen, hash),
		fmt.Sprintf(`{"a.txt":{"content_type":"text/plain","revpos":1,"digest":%q,"length":5,"stub":true},"b.txt":{"content_type":"text/plain","revpos":0,"length":2,"stub":true}}`, old.Attachments["a.txt"].Digest),
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("argument part %d: %s, want %s", i, got[i], want[i])
		}
	}
}
