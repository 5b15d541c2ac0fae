package mobile

import (
	"encoding/json"
	"testing"
)

// TestSetValidation: with validation on, the store's validate_doc_update
// refuses writes for the writer the app names (Put, Delete, attachments)
// and nothing of them is written; off, everything is written, as PouchDB
// does.
func TestSetValidation(t *testing.T) {
	d := openTest(t)
	vdu := `function (newDoc, oldDoc, userCtx) {
		if (userCtx.roles.indexOf('editor') < 0) throw({unauthorized: 'editors only'});
		if (newDoc._deleted) throw({forbidden: 'no deletes'});
		if (newDoc._attachments && newDoc._attachments['big.bin'] && newDoc._attachments['big.bin'].length > 4) throw({forbidden: 'too big'});
		if (newDoc.owner && newDoc.owner !== userCtx.name) throw({forbidden: 'not yours'});
	}`
	if _, err := d.Put(`{"_id": "_design/rules", "validate_doc_update": ` + quote(vdu) + `}`); err != nil {
		t.Fatal(err)
	}
	if err := d.SetValidation(true, `{"name": "ann", "roles": ["editor"], "db": "tasks"}`); err != nil {
		t.Fatal(err)
	}
	rev, err := d.Put(`{"_id": "a", "owner": "ann"}`)
	if err != nil {
		t.Fatal(err)
	}
	refused := func(what, code string, err error) {
		t.Helper()
		if ErrorCode(err) != code {
			t.Fatalf("%s: %v (code %q), want %s", what, err, ErrorCode(err), code)
		}
	}
	_, err = d.Put(`{"_id": "b", "owner": "bob"}`)
	refused("put of bob's doc", CodeForbidden, err)
	if _, err := d.Get("b"); ErrorCode(err) != CodeNotFound {
		t.Fatalf("b was written: %v", err)
	}
	_, err = d.Delete("a", rev)
	refused("delete", CodeForbidden, err)
	_, err = d.PutAttachment("a", rev, "big.bin", "application/octet-stream", []byte("0123456789"))
	refused("attachment", CodeForbidden, err)
	if rev, err = d.PutAttachment("a", rev, "small.bin", "application/octet-stream", []byte("01")); err != nil {
		t.Fatalf("small attachment: %v", err)
	}

	if err := d.SetValidation(true, `{"name": "zed", "roles": []}`); err != nil {
		t.Fatal(err)
	}
	_, err = d.Put(`{"_id": "c"}`)
	refused("put by a non-editor", CodeUnauthorized, err)
	if err := d.SetValidation(true, `["not an object"]`); ErrorCode(err) != CodeBadRequest {
		t.Fatalf("bad userCtx: %v", err)
	}

	if err := d.SetValidation(false, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Delete("a", rev); err != nil {
		t.Fatalf("delete with validation off: %v", err)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestSetValidationAfterClose: a closed Database refuses SetValidation.
func TestSetValidationAfterClose(t *testing.T) {
	d := openTest(t)
	if err := d.SetValidation(true, `{"name": "ann"}`); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.SetValidation(true, ""); ErrorCode(err) != CodeClosed {
		t.Fatalf("after Close: %v", err)
	}
}
