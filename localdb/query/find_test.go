package query_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/mango"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/localdb/query"
)

func orders(t *testing.T) *localdb.DB {
	db := localdbtest.Open(t)
	for i := 0; i < 40; i++ {
		put(t, db, fmt.Sprintf("o%02d", i), fmt.Sprintf(`{"customer": "c%d", "when": %d, "open": %v, "total": %d, "items": {"n": %d}}`, i%4, i, i%3 == 0, 100-i, i%5))
	}
	return db
}

func TestFindPlansLikeCouchDB(t *testing.T) {
	db := orders(t)
	// No index for a sort: CouchDB's no_usable_index.
	_, err := query.Find(bg, db, []byte(`{"selector": {"customer": "c1"}, "sort": ["when"]}`))
	wantCouchError(t, err, 400, "no_usable_index")
	_, err = query.Find(bg, db, []byte(`{"selector": {"customer": "c1"}, "sort": [{"when": "desc"}, "total"]}`))
	wantCouchError(t, err, 400, "unsupported_mixed_sort")
	// Without an index: the _all_docs scan and its warnings.
	res := find(t, db, `{"selector": {"customer": "c1"}, "execution_stats": true}`)
	if len(res.Docs) != 10 || res.Stats.TotalDocsExamined != 40 ||
		res.Warning != "No matching index found, create an index to optimize query time." {
		t.Fatalf("no index: %d docs %+v %q", len(res.Docs), res.Stats, res.Warning)
	}
	res = find(t, db, `{"selector": {"when": 7}}`)
	if !strings.Contains(res.Warning, "No matching index found") || !strings.Contains(res.Warning, "\nThe number of documents examined is high") {
		t.Fatalf("warnings %q", res.Warning)
	}
	createIndex(t, db, `{"index": {"fields": ["customer", "when"]}, "ddoc": "orders", "name": "customer-when"}`)
	createIndex(t, db, `{"index": {"fields": ["when"], "partial_filter_selector": {"open": true}}, "ddoc": "orders", "name": "when"}`)
	// "Open orders of this customer, newest first": the index bounds the
	// range, so only the returned rows are read.
	res = find(t, db, `{"selector": {"customer": "c1", "when": {"$gt": 4}}, "sort": [{"customer": "desc"}, {"when": "desc"}], "limit": 3, "execution_stats": true}`)
	if got := ids(t, res); !reflect.DeepEqual(got, []string{"o37", "o33", "o29"}) || res.Warning != "" || res.Stats.TotalKeysExamined != 3 {
		t.Fatalf("indexed: %v %q %+v", got, res.Warning, res.Stats)
	}
	// A constant leading column lets the index serve a sort on the next.
	res = find(t, db, `{"selector": {"customer": "c2"}, "sort": ["when"], "limit": 2}`)
	if got := ids(t, res); !reflect.DeepEqual(got, []string{"o02", "o06"}) {
		t.Fatalf("constant prefix: %v", got)
	}
	// The partial index is used only when named.
	q := `{"selector": {"when": {"$lt": 7}, "open": true}, "execution_stats": true}`
	if ex, _ := query.Explain(bg, db, "db", []byte(q)); ex["index"].(query.IndexInfo).Name != "_all_docs" {
		t.Fatalf("partial index chosen unasked: %v", ex["index"])
	}
	res = find(t, db, strings.Replace(q, `{"selector"`, `{"use_index": ["orders", "when"], "selector"`, 1))
	if got := ids(t, res); !reflect.DeepEqual(got, []string{"o00", "o03", "o06"}) || res.Warning != "" || res.Stats.TotalKeysExamined != 3 {
		t.Fatalf("partial: %v %q %+v", got, res.Warning, res.Stats)
	}
	// use_index naming an index that cannot serve the query.
	res = find(t, db, `{"selector": {"total": 99}, "use_index": "orders"}`)
	if !strings.HasPrefix(res.Warning, "_design/orders was not used because it does not contain a valid index for this query.") || len(res.Docs) != 1 {
		t.Fatalf("use_index fallback %q", res.Warning)
	}
}

func TestFindPagesWithBookmarks(t *testing.T) {
	db := orders(t)
	createIndex(t, db, `{"index": {"fields": ["items.n", "when"]}}`)
	for _, q := range []string{
		`{"selector": {"items.n": {"$gte": 1}}, "sort": ["items.n", "when"], "limit": 4}`,
		`{"selector": {"items.n": {"$gte": 1}}, "sort": [{"items.n": "desc"}, {"when": "desc"}], "limit": 3}`,
		`{"selector": {"total": {"$gt": 70}}, "limit": 7}`,
	} {
		all := ids(t, find(t, db, strings.Replace(q, `"limit"`, `"limit": 1000, "x"`, 1)))
		var paged []string
		bookmark := ""
		for i := 0; i < 50; i++ {
			body := q
			if bookmark != "" {
				body = strings.Replace(q, `{"selector"`, `{"bookmark": "`+bookmark+`", "selector"`, 1)
			}
			res := find(t, db, body)
			if len(res.Docs) == 0 {
				if res.Bookmark != bookmark {
					t.Fatalf("empty page changed the bookmark")
				}
				break
			}
			paged = append(paged, ids(t, res)...)
			bookmark = res.Bookmark
		}
		if len(all) < 5 || !reflect.DeepEqual(paged, all) {
			t.Fatalf("%s: paged %v, all %v", q, paged, all)
		}
	}
	_, err := query.Find(bg, db, []byte(`{"selector": {}, "bookmark": "!!"}`))
	wantCouchError(t, err, 400, "invalid_bookmark")
}

func TestFindFieldsSkipLimit(t *testing.T) {
	db := orders(t)
	res := find(t, db, `{"selector": {"customer": "c3"}, "fields": ["_id", "items.n", "missing"], "skip": 1, "limit": 2}`)
	got, _ := json.Marshal(res.Docs)
	if string(got) != `[{"_id":"o07","items":{"n":2}},{"_id":"o11","items":{"n":1}}]` {
		t.Fatalf("fields: %s", got)
	}
	if res := find(t, db, `{"selector": {}, "limit": 0}`); len(res.Docs) != 0 || res.Bookmark != "nil" {
		t.Fatalf("limit 0: %+v", res)
	}
	// The default limit is 25.
	if res := find(t, db, `{"selector": {}}`); len(res.Docs) != 25 {
		t.Fatalf("default limit: %d docs", len(res.Docs))
	}
}

func TestFindRejects(t *testing.T) {
	db := orders(t)
	for _, c := range []struct{ req, name string }{
		{`{}`, "missing_required_key"},
		{`{"selector": []}`, "invalid_selector_json"},
		{`{"selector": {"a": {"$nope": 1}}}`, "invalid_operator"},    // CouchDB 3.5's answer
		{`{"selector": {}, "limit": -1}`, "invalid_non_neg_integer"}, // likewise
		{`{"selector": {}, "skip": "x"}`, "invalid_value"},
		{`{"selector": {}, "sort": "a"}`, "invalid_sort_json"},
		{`{"selector": {}, "fields": "a"}`, "invalid_value"},
		{`{"selector": {}, "use_index": 3}`, "invalid_value"},
		{`not json`, "bad_request"},
	} {
		_, err := query.Find(bg, db, []byte(c.req))
		wantCouchError(t, err, 400, c.name)
	}
}

func TestFindReturnsAttachmentStubs(t *testing.T) {
	db := localdbtest.Open(t)
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "p", Body: json.RawMessage(`{"kind": "photo"}`),
		Attachments: map[string]*couchdoc.Attachment{"a.txt": {ContentType: "text/plain", Data: []byte("hello")}}}); err != nil {
		t.Fatal(err)
	}
	res := find(t, db, `{"selector": {"kind": "photo"}}`)
	var doc struct {
		Attachments map[string]struct {
			Stub   bool `json:"stub"`
			Length int  `json:"length"`
		} `json:"_attachments"`
	}
	if len(res.Docs) != 1 || json.Unmarshal(res.Docs[0], &doc) != nil || !doc.Attachments["a.txt"].Stub || doc.Attachments["a.txt"].Length != 5 {
		t.Fatalf("doc %s", res.Docs)
	}
}

// TestFindGtSkipsTheBound: a $gt on an index column whose lower bound has
// many rows passes them over unread (localdb.IndexScan.Skip), yet counts
// them as CouchDB examines them, with the same answer and warning; with an
// upper bound inside it; and with a bookmark.
func TestFindGtSkipsTheBound(t *testing.T) {
	db := localdbtest.Open(t)
	for i := 0; i < 60; i++ {
		put(t, db, fmt.Sprintf("p%02d", i), fmt.Sprintf(`{"type": "user", "age": %d}`, 30+i/40)) // 40 at 30, 20 at 31
	}
	put(t, db, "_design/odd", `{"type": "user", "age": 30}`)
	createIndex(t, db, `{"index": {"fields": ["type", "age"]}, "ddoc": "ui", "name": "type-age"}`)
	res := find(t, db, `{"selector": {"type": "user", "age": {"$gt": 30}}, "sort": [{"type": "asc"}, {"age": "asc"}], "limit": 3, "execution_stats": true}`)
	if got := ids(t, res); strings.Join(got, ",") != "p40,p41,p42" {
		t.Fatalf("rows %v", got)
	}
	// CouchDB reads the 40 rows of age 30 (design documents are in no
	// json index) before the 3 it returns.
	if res.Stats.TotalKeysExamined != 43 || res.Stats.TotalDocsExamined != 43 || res.Stats.ResultsReturned != 3 ||
		!strings.Contains(res.Warning, "The number of documents examined is high") {
		t.Fatalf("stats %+v, warning %q", res.Stats, res.Warning)
	}
	// Nothing above the bound: the skipped rows still count.
	res = find(t, db, `{"selector": {"type": "user", "age": {"$gt": 31}}, "execution_stats": true}`)
	if len(res.Docs) != 0 || res.Stats.TotalKeysExamined != 20 || res.Stats.TotalDocsExamined != 20 {
		t.Fatalf("above every row: %d docs, stats %+v", len(res.Docs), res.Stats)
	}
	// An upper bound: $gt 30 and $lt 31 matches nothing.
	res = find(t, db, `{"selector": {"type": "user", "age": {"$gt": 30, "$lt": 31}}, "execution_stats": true}`)
	if len(res.Docs) != 0 || res.Stats.TotalKeysExamined != 40 {
		t.Fatalf("$gt 30 $lt 31: %d docs, stats %+v", len(res.Docs), res.Stats)
	}
	// A bookmark resumes after the first page, past the bound.
	var page struct {
		Bookmark string `json:"bookmark"`
	}
	first := find(t, db, `{"selector": {"type": "user", "age": {"$gt": 30}}, "limit": 5}`)
	page.Bookmark = first.Bookmark
	next := find(t, db, fmt.Sprintf(`{"selector": {"type": "user", "age": {"$gt": 30}}, "limit": 5, "bookmark": %q}`, page.Bookmark))
	if got := ids(t, next); strings.Join(got, ",") != "p45,p46,p47,p48,p49" {
		t.Fatalf("after the bookmark: %v", got)
	}
}

// TestScanSkip: an index scan with Skip gives no row of the skipped
// prefix (its ids go to Skipped, once, before the first row) and every row
// after it, also when the range ends inside the prefix.
func TestScanSkip(t *testing.T) {
	db := localdbtest.Open(t)
	for i := 0; i < 30; i++ {
		put(t, db, fmt.Sprintf("p%02d", i), fmt.Sprintf(`{"age": %d}`, 30+i/20)) // 20 at 30, 10 at 31
	}
	createIndex(t, db, `{"index": {"fields": ["age"]}, "ddoc": "a", "name": "age"}`)
	start := mango.EncodeKey(nil, 30.0)
	for _, tc := range []struct {
		end           []byte
		rows, skipped int
	}{{nil, 10, 20}, {append(slices.Clip(start), 0), 0, 0}} {
		var got []string
		var skipped [][]string
		err := db.ScanIndex(bg, localdb.IndexScan{DDoc: "_design/a", Name: "age", Start: start, End: tc.end, Skip: start,
			Skipped: func(ids []string) { skipped = append(skipped, ids) }}, func(r *localdb.IndexRow) (bool, error) {
			got = append(got, r.Doc.ID)
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, s := range skipped {
			n += len(s)
		}
		if len(got) != tc.rows || n != tc.skipped || len(skipped) > 1 || (tc.rows > 0 && got[0] != "p20") {
			t.Errorf("end %x: rows %v, skipped %v", tc.end, got, skipped)
		}
	}
}
