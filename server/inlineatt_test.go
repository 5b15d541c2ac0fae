package server

import (
	"encoding/base64"
	"testing"
)

// A document written again with an attachment whose data changed but
// whose old digest, length and revpos are still in the JSON (what a PouchDB
// app sends after replacing att.data in a document it read) is new data,
// as in CouchDB 3.5.0 (couch_att:inline_from_json reads only data and
// content_type): 201, the attachment's digest and length are the new
// bytes', and its revpos is the new revision's. By PUT and by _bulk_docs.
func TestInlineDataReplacesStatedDigest(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	b64 := base64.StdEncoding.EncodeToString
	for _, via := range []string{"PUT", "_bulk_docs"} {
		id := "d-" + via
		ts.putDoc("db", id, map[string]any{"_attachments": map[string]any{
			"a.txt": map[string]any{"content_type": "text/plain", "data": b64([]byte("hello"))}}})
		doc := ts.must(200, "GET", "/db/"+id, nil).json(t)
		att := doc["_attachments"].(map[string]any)["a.txt"].(map[string]any)
		delete(att, "stub")
		att["data"] = b64([]byte("brave new world")) // digest, length, revpos stay
		var rev string
		if via == "PUT" {
			rev = ts.putDoc("db", id, doc)
		} else {
			res := ts.must(201, "POST", "/db/_bulk_docs", map[string]any{"docs": []any{doc}}).body
			var out []map[string]any
			if err := jsonUnmarshal(res, &out); err != nil || len(out) != 1 || out[0]["ok"] != true {
				t.Fatalf("_bulk_docs: %s", res)
			}
			rev = out[0]["rev"].(string)
		}
		if rev[:2] != "2-" {
			t.Fatalf("%s: rev %s", via, rev)
		}
		got := ts.must(200, "GET", "/db/"+id, nil).json(t)["_attachments"].(map[string]any)["a.txt"].(map[string]any)
		if got["revpos"] != 2.0 || got["length"] != 15.0 || got["digest"] != "md5-puZ4lz92+NOma+WAZqQzqQ==" {
			t.Errorf("%s: attachment after the edit: %v", via, got)
		}
		if body := ts.must(200, "GET", "/db/"+id+"/a.txt", nil).body; string(body) != "brave new world" {
			t.Errorf("%s: attachment bytes %q", via, body)
		}
	}
	// A stated length that is not the data's is ignored too.
	ts.putDoc("db", "len", map[string]any{"_attachments": map[string]any{
		"a": map[string]any{"data": b64([]byte("abc")), "length": 99, "digest": "md5-AAAAAAAAAAAAAAAAAAAAAA==", "revpos": 7}}})
	got := ts.must(200, "GET", "/db/len", nil).json(t)["_attachments"].(map[string]any)["a"].(map[string]any)
	if got["revpos"] != 1.0 || got["length"] != 3.0 || got["digest"] != "md5-kAFQmDzST7DWlj99KOF/cg==" {
		t.Errorf("stated length/digest/revpos kept: %v", got)
	}
}
