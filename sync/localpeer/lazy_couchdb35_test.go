package localpeer_test

import (
	"bufio"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	gosync "sync"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// exchange is one recorded CouchDB 3.5 answer of
// testdata/couchdb35/exchanges/requests.jsonl.
type exchange struct {
	Seq         int               `json:"seq"`
	RespHeaders map[string]string `json:"resp_headers"`
	RespBody    string            `json:"resp_body"`
	Base64      bool              `json:"resp_body_base64"`
}

func recorded(t *testing.T, seqs ...int) map[int]exchange {
	f, err := os.Open("../../testdata/couchdb35/exchanges/requests.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int]exchange{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e exchange
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		for _, s := range seqs {
			if e.Seq == s && !e.Base64 {
				out[s] = e
			}
		}
	}
	if len(out) != len(seqs) {
		t.Fatalf("found %d of exchanges %v", len(out), seqs)
	}
	return out
}

// A gzip-stored text attachment of CouchDB 3.5 (its stub says encoding
// gzip; its digest is over the gzip bytes), pulled lazily and then fetched
// through a cut that CouchDB cannot resume (it answers Range on such an
// attachment with 200 and Accept-Ranges: none): the decoded bytes are
// stored under their own md5, as an eager pull stores them.
func TestFetchGzipStoredCouchDB35Attachment(t *testing.T) {
	ex := recorded(t, 93, 177, 180)
	doc, err := couchdoc.ParseDoc([]byte(ex[93].RespBody))
	if err != nil {
		t.Fatal(err)
	}
	gen, hash, _ := couchdoc.ParseRev(doc.Rev)
	doc.Revisions = &couchdoc.Revisions{Start: gen, IDs: []string{hash}}
	db, err := localdb.Open(t.TempDir()+"/l.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if res, err := db.BulkDocsLazy(ctx, []*couchdoc.Doc{doc}); err != nil || res[0].Err() != nil {
		t.Fatalf("%+v %v", res, err)
	}
	st, err := db.Attachment(ctx, "att-01", "readme.txt")
	if err != nil || st.Downloaded || st.Attachment.Encoding != "gzip" || st.Attachment.Digest != "md5-TflnDBlW+bvkBdeSaBqTmA==" {
		t.Fatalf("lazy stub %+v %v", st, err)
	}
	body := ex[177].RespBody
	var mu gosync.Mutex
	var ranges []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/corpus_req/att-01/readme.txt" || r.URL.Query().Get("rev") != doc.Rev {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		ranges = append(ranges, r.Header.Get("Range"))
		first := len(ranges) == 1
		mu.Unlock()
		e := ex[177]
		if r.Header.Get("Range") != "" {
			e = ex[180]
		}
		for k, v := range e.RespHeaders {
			w.Header().Set(k, v)
		}
		w.WriteHeader(200)
		if first { // the connection drops a third of the way
			io.WriteString(w, body[:1000])
			return
		}
		io.WriteString(w, e.RespBody)
	}))
	defer srv.Close()
	remote, err := couch.New(srv.URL+"/corpus_req", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := localpeer.FetchAttachment(ctx, remote, db, "att-01", "readme.txt"); err != nil {
		t.Fatal(err)
	}
	if len(ranges) != 2 || ranges[0] != "" || ranges[1] != "bytes=1000-" {
		t.Fatalf("ranges asked %q", ranges)
	}
	_, rc, err := db.OpenAttachment(ctx, "att-01", "", "readme.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(got) != body || strconv.Itoa(len(got)) != ex[177].RespHeaders["Content-Length"] {
		t.Fatalf("stored %d bytes, %v", len(got), err)
	}
	sum := md5.Sum(got)
	st, err = db.Attachment(ctx, "att-01", "readme.txt")
	if err != nil || !st.Downloaded || st.Attachment.Digest != "md5-"+base64.StdEncoding.EncodeToString(sum[:]) || st.Attachment.Encoding != "" {
		t.Fatalf("after fetch %+v %v", st.Attachment, err)
	}
	if err := db.CheckInvariants(ctx); err != nil {
		t.Fatal(err)
	}
}
