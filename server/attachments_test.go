package server

import (
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
)

func md5Digest(b []byte) string {
	s := md5.Sum(b)
	return "md5-" + base64.StdEncoding.EncodeToString(s[:])
}

func TestAttachments(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB
	small := []byte("hello world")

	// PUT on a missing doc creates it; a chunked body (unknown length) too.
	m := ts.must(201, "PUT", "/db/doc/big.bin", io.MultiReader(bytes.NewReader(big)), "Content-Type", "application/x-test").json(t)
	rev1 := m["rev"].(string)
	ts.wantError(409, "conflict", "PUT", "/db/doc/small.txt", string(small), "Content-Type", "text/plain")
	m = ts.must(201, "PUT", "/db/doc/dir%2Fsmall.txt?rev="+rev1, string(small), "Content-Type", "text/plain").json(t)
	rev2 := m["rev"].(string)

	r := ts.must(200, "GET", "/db/doc/big.bin", nil)
	if !bytes.Equal(r.body, big) || r.header.Get("Content-Type") != "application/x-test" ||
		r.header.Get("Content-Length") != strconv.Itoa(len(big)) {
		t.Fatalf("GET big: %d bytes, headers %v", len(r.body), r.header)
	}
	etag := r.header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	ts.must(304, "GET", "/db/doc/big.bin", nil, "If-None-Match", etag)
	if h := ts.must(200, "HEAD", "/db/doc/dir%2Fsmall.txt", nil); h.header.Get("Content-Length") != strconv.Itoa(len(small)) {
		t.Fatalf("HEAD: %v", h.header)
	}
	if r := ts.must(200, "GET", "/db/doc/dir/small.txt", nil); string(r.body) != string(small) {
		t.Fatalf("GET small: %q", r.body)
	}
	ts.wantError(404, "not_found", "GET", "/db/doc/nosuch", nil)
	ts.wantError(404, "not_found", "GET", "/db/nodoc/att", nil)

	// The doc lists stubs; attachments=true inlines base64.
	m = ts.must(200, "GET", "/db/doc", nil).json(t)
	atts := m["_attachments"].(map[string]any)
	if a := atts["big.bin"].(map[string]any); a["stub"] != true || a["digest"] != md5Digest(big) || a["length"] != float64(len(big)) {
		t.Fatalf("stub: %v", a)
	}
	m = ts.must(200, "GET", "/db/doc?attachments=true", nil).json(t)
	data := m["_attachments"].(map[string]any)["big.bin"].(map[string]any)["data"].(string)
	if dec, _ := base64.StdEncoding.DecodeString(data); !bytes.Equal(dec, big) {
		t.Fatal("inline data differs")
	}
	// atts_since the current rev: stubs only.
	m = ts.must(200, "GET", `/db/doc?atts_since=["`+rev2+`"]`, nil).json(t)
	if a := m["_attachments"].(map[string]any)["big.bin"].(map[string]any); a["stub"] != true {
		t.Fatalf("atts_since: %v", a)
	}
	// multipart/related download.
	r = ts.must(200, "GET", "/db/doc?attachments=true", nil, "Accept", "multipart/related")
	if !strings.HasPrefix(r.header.Get("Content-Type"), "multipart/related") {
		t.Fatalf("Content-Type %q", r.header.Get("Content-Type"))
	}
	checkRelated(t, r, map[string][]byte{"big.bin": big, "dir/small.txt": small})

	// Delete one attachment.
	ts.wantError(409, "conflict", "DELETE", "/db/doc/big.bin", nil)
	m = ts.must(200, "DELETE", "/db/doc/big.bin?rev="+rev2, nil).json(t)
	ts.wantError(404, "not_found", "GET", "/db/doc/big.bin", nil)
	ts.wantError(404, "not_found", "DELETE", "/db/doc/big.bin?rev="+m["rev"].(string), nil)
	// The old revision still has it.
	if r := ts.must(200, "GET", "/db/doc/big.bin?rev="+rev2, nil); !bytes.Equal(r.body, big) {
		t.Fatal("old revision lost its attachment")
	}
}

func checkRelated(t *testing.T, r resp, want map[string][]byte) {
	t.Helper()
	seen := 0
	err := wire.ReadDocs(bytes.NewReader(r.body), r.header.Get("Content-Type"), func(doc *couchdoc.Doc, revErr error) error {
		if revErr != nil {
			return revErr
		}
		for name, a := range doc.Attachments {
			var got []byte
			if a.Body != nil {
				got, _ = io.ReadAll(a.Body)
			} else {
				got = a.Data
			}
			if w, ok := want[name]; !ok || !bytes.Equal(got, w) {
				t.Errorf("attachment %s: %d bytes", name, len(got))
			}
			seen++
		}
		return nil
	})
	if err != nil || seen != len(want) {
		t.Fatalf("multipart/related: %v, %d attachments", err, seen)
	}
}

// relatedBody builds a multipart/related upload like CouchDB's replicator.
func relatedBody(t *testing.T, doc map[string]any, atts map[string][]byte) (string, []byte) {
	t.Helper()
	boundary := "abc123boundary"
	meta := map[string]any{}
	var names []string
	for name, b := range atts {
		meta[name] = map[string]any{"content_type": "text/plain", "digest": md5Digest(b), "length": len(b), "follows": true, "revpos": 1}
		names = append(names, name)
	}
	doc["_attachments"] = meta
	js, _ := json.Marshal(doc)
	var buf bytes.Buffer
	buf.WriteString("--" + boundary + "\r\nContent-Type: application/json\r\n\r\n")
	buf.Write(js)
	// Parts follow in the order of the JSON's "follows" entries (sorted keys).
	sortStrings(names)
	for _, name := range names {
		buf.WriteString("\r\n--" + boundary + "\r\nContent-Disposition: attachment; filename=\"" + name + "\"\r\nContent-Type: text/plain\r\nContent-Length: " + strconv.Itoa(len(atts[name])) + "\r\n\r\n")
		buf.Write(atts[name])
	}
	buf.WriteString("\r\n--" + boundary + "--")
	return `multipart/related; boundary="` + boundary + `"`, buf.Bytes()
}

func TestMultipartRelatedUpload(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	a, b := bytes.Repeat([]byte("a"), 100000), []byte("bee")
	doc := branchDoc("m", false, map[string]any{"k": "v"}, "abc", "def")
	ct, body := relatedBody(t, doc, map[string][]byte{"a.txt": a, "b.txt": b})
	m := ts.must(201, "PUT", "/db/m?new_edits=false", body, "Content-Type", ct).json(t)
	if m["rev"] != "2-abc" {
		t.Fatalf("upload: %v", m)
	}
	if r := ts.must(200, "GET", "/db/m/a.txt", nil); !bytes.Equal(r.body, a) {
		t.Fatal("a.txt differs")
	}
	// A new edit with multipart (new_edits=true) and a digest mismatch.
	doc2 := map[string]any{"_rev": "2-abc"}
	ct, body = relatedBody(t, doc2, map[string][]byte{"c.txt": []byte("sea")})
	body = bytes.Replace(body, []byte("sea"), []byte("see"), 1)
	seq := ts.updateSeq("db")
	if r := ts.do("PUT", "/db/m", body, "Content-Type", ct); r.status != 400 {
		t.Fatalf("digest mismatch: %d %s", r.status, r.body)
	}
	// Truncated body.
	ct, body = relatedBody(t, map[string]any{"_rev": "2-abc"}, map[string][]byte{"c.txt": []byte("sea")})
	if r := ts.do("PUT", "/db/m", body[:len(body)-30], "Content-Type", ct); r.status != 400 {
		t.Fatalf("truncated: %d %s", r.status, r.body)
	}
	if ts.updateSeq("db") != seq {
		t.Fatal("a refused upload changed the database")
	}
	ct, body = relatedBody(t, map[string]any{"_rev": "2-abc"}, map[string][]byte{"c.txt": []byte("sea")})
	m = ts.must(201, "PUT", "/db/m", body, "Content-Type", ct).json(t)
	if !strings.HasPrefix(m["rev"].(string), "3-") {
		t.Fatalf("new edit: %v", m)
	}
	// The stubs of the parent were not sent: CouchDB drops them, so only
	// c.txt remains.
	got := ts.must(200, "GET", "/db/m", nil).json(t)
	if atts := got["_attachments"].(map[string]any); len(atts) != 1 || atts["c.txt"] == nil {
		t.Fatalf("attachments after edit: %v", got["_attachments"])
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// open_revs and _bulk_get stream attachment bytes in multipart/mixed
// answers, and only those newer than atts_since.
func TestMultipartMixedWithAttachments(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	big := bytes.Repeat([]byte("xyz"), 200000)
	rev1 := ts.must(201, "PUT", "/db/d/big", big, "Content-Type", "application/octet-stream").json(t)["rev"].(string)
	rev2 := ts.must(201, "PUT", "/db/d/small?rev="+rev1, "tiny", "Content-Type", "text/plain").json(t)["rev"].(string)

	read := func(r resp) map[string][]byte {
		t.Helper()
		got := map[string][]byte{}
		err := wire.ReadDocs(bytes.NewReader(r.body), r.header.Get("Content-Type"), func(doc *couchdoc.Doc, revErr error) error {
			if revErr != nil {
				return revErr
			}
			for name, a := range doc.Attachments {
				switch {
				case a.Stub:
					got[name] = nil
				case a.Body != nil:
					got[name], _ = io.ReadAll(a.Body)
				default:
					got[name] = a.Data
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return got
	}
	r := ts.must(200, "GET", "/db/d?open_revs=all&revs=true&attachments=true", nil, "Accept", "multipart/mixed")
	got := read(r)
	if !bytes.Equal(got["big"], big) || string(got["small"]) != "tiny" {
		t.Fatalf("open_revs multipart: big %d bytes, small %q", len(got["big"]), got["small"])
	}
	r = ts.must(200, "GET", `/db/d?open_revs=["`+rev2+`"]&revs=true&atts_since=["`+rev1+`"]`, nil, "Accept", "multipart/mixed")
	got = read(r)
	if got["big"] != nil || string(got["small"]) != "tiny" {
		t.Fatalf("atts_since: big %d bytes, small %q", len(got["big"]), got["small"])
	}
	body := map[string]any{"docs": []map[string]any{{"id": "d", "rev": rev2, "atts_since": []string{rev1}}}}
	r = ts.must(200, "POST", "/db/_bulk_get?revs=true&attachments=true", body, "Accept", "multipart/mixed")
	got = read(r)
	if got["big"] != nil || string(got["small"]) != "tiny" {
		t.Fatalf("_bulk_get atts_since: big %d bytes, small %q", len(got["big"]), got["small"])
	}
	body = map[string]any{"docs": []map[string]any{{"id": "d", "rev": rev2}}}
	r = ts.must(200, "POST", "/db/_bulk_get?revs=true&attachments=true", body)
	got = map[string][]byte{}
	err := wire.ReadBulkGet(bytes.NewReader(r.body), func(doc *couchdoc.Doc, revErr error) error {
		if revErr != nil {
			return revErr
		}
		for name, a := range doc.Attachments {
			got[name] = a.Data
		}
		return nil
	})
	if err != nil || !bytes.Equal(got["big"], big) || string(got["small"]) != "tiny" {
		t.Fatalf("_bulk_get JSON: big %d bytes", len(got["big"]))
	}
}

// CouchDB's replicator sends attachments it stores compressed as gzip
// parts ("encoding": "gzip"); the server stores and serves the bytes.
func TestMultipartUploadGzipPart(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	plain := bytes.Repeat([]byte("hello, world\n"), 500)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	doc := map[string]any{
		"_id": "g", "_rev": "1-abcabc",
		"_attachments": map[string]any{"a.txt": map[string]any{
			"content_type": "text/plain", "revpos": 1, "digest": md5Digest(plain), "length": len(plain),
			"follows": true, "encoding": "gzip", "encoded_length": gz.Len(),
		}},
	}
	js, _ := json.Marshal(doc)
	var body bytes.Buffer
	body.WriteString("--bb\r\nContent-Type: application/json\r\n\r\n")
	body.Write(js)
	body.WriteString("\r\n--bb\r\nContent-Disposition: attachment; filename=\"a.txt\"\r\nContent-Type: text/plain\r\nContent-Length: " + strconv.Itoa(gz.Len()) + "\r\nContent-Encoding: gzip\r\n\r\n")
	body.Write(gz.Bytes())
	body.WriteString("\r\n--bb--")
	ts.must(201, "PUT", "/db/g?new_edits=false", body.Bytes(), "Content-Type", `multipart/related; boundary="bb"`)
	r := ts.must(200, "GET", "/db/g/a.txt", nil)
	if !bytes.Equal(r.body, plain) {
		t.Fatalf("stored %d bytes, want %d identity bytes", len(r.body), len(plain))
	}
	m := ts.must(200, "GET", "/db/g", nil).json(t)
	a := m["_attachments"].(map[string]any)["a.txt"].(map[string]any)
	if a["digest"] != md5Digest(plain) || a["length"] != float64(len(plain)) {
		t.Fatalf("stub: %v", a)
	}
}

// TestAttachmentMembersOrder checks the members of attachment stubs and
// inline attachments in CouchDB 3.5's order, as it sends them (the same
// order design-funcs.jsonl records a map function seeing).
func TestAttachmentMembersOrder(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	ts.must(201, "PUT", "/db/a", map[string]any{"_attachments": map[string]any{
		"b.bin": map[string]any{"content_type": "application/octet-stream", "data": "aGVsbG8="}}})
	for _, c := range []struct{ path, want string }{
		{"/db/a", `{"content_type":"application/octet-stream","revpos":1,"digest":"md5-XUFAKrxLKna5cZ2REBfFkg==","length":5,"stub":true}`},
		{"/db/a?attachments=true", `{"content_type":"application/octet-stream","revpos":1,"digest":"md5-XUFAKrxLKna5cZ2REBfFkg==","data":"aGVsbG8="}`},
		{"/db/_changes?include_docs=true", `{"content_type":"application/octet-stream","revpos":1,"digest":"md5-XUFAKrxLKna5cZ2REBfFkg==","length":5,"stub":true}`},
	} {
		if r := ts.must(200, "GET", c.path, nil); !strings.Contains(string(r.body), `"b.bin":`+c.want) {
			t.Errorf("GET %s: %s, want the attachment as %s", c.path, r.body, c.want)
		}
	}
}

// TestMembersInCouchDBOrder checks the order of a document's members
// (_id, _rev, the body, _deleted, _revisions, _revs_info, _conflicts,
// _deleted_conflicts, _local_seq, _attachments), of a database's info and
// of a _bulk_get error, as CouchDB 3.5.0 sends them (our build, 2026-11-29).
func TestMembersInCouchDBOrder(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	ts.must(201, "POST", "/db/_bulk_docs", map[string]any{"new_edits": false, "docs": []map[string]any{
		{"_id": "e", "_rev": "1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "x": 1},
		{"_id": "e", "_rev": "1-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "x": 2},
		{"_id": "e", "_rev": "1-cccccccccccccccccccccccccccccccc", "x": 3, "_deleted": true},
		{"_id": "f", "_rev": "1-dddddddddddddddddddddddddddddddd", "z": 1, "_deleted": true}}})
	ts.must(201, "PUT", "/db/e/t.bin?rev=1-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "hi", "Content-Type", "application/octet-stream")
	for _, c := range []struct {
		path string
		want []string
	}{
		{"/db/e?revs=true&revs_info=true&conflicts=true&deleted_conflicts=true&local_seq=true",
			[]string{"_id", "_rev", "x", "_revisions", "_revs_info", "_conflicts", "_deleted_conflicts", "_local_seq", "_attachments"}},
		{"/db/f?rev=1-dddddddddddddddddddddddddddddddd&revs=true", []string{"_id", "_rev", "z", "_deleted", "_revisions"}},
		{"/db", []string{"instance_start_time", "db_name", "purge_seq", "update_seq", "sizes", "props", "doc_del_count", "doc_count", "disk_format_version", "compact_running", "cluster"}},
	} {
		if got := topKeys(t, ts.must(200, "GET", c.path, nil).body); !slices.Equal(got, c.want) {
			t.Errorf("GET %s: members %q, want %q", c.path, got, c.want)
		}
	}
	r := ts.must(200, "POST", "/db/_bulk_get", map[string]any{"docs": []map[string]string{{"id": "nope"}}})
	if !strings.Contains(string(r.body), `{"error":{"rev":"undefined","reason":"missing","id":"nope","error":"not_found"}}`) {
		t.Errorf("_bulk_get of a missing document: %s", r.body)
	}
}

// topKeys returns the names of a JSON object's members, in order.
func topKeys(t *testing.T, body []byte) []string {
	t.Helper()
	var keys []string
	if !couchdoc.EachMember(body, func(key, _ []byte) bool {
		var k string
		if err := json.Unmarshal(key, &k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
		return true
	}) {
		t.Fatalf("not a JSON object: %s", body)
	}
	return keys
}
