package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"
)

// deleteRaceOutcome tallies what requests racing DELETE /{db} were answered.
type deleteRaceOutcome struct {
	mu     gosync.Mutex
	counts map[string]int
	bad    []string
}

func (o *deleteRaceOutcome) note(what string, status int, body []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	key := fmt.Sprintf("%s %d", what, status)
	o.counts[key]++
	ok := status < 300
	if status == http.StatusNotFound {
		var e errorBody
		ok = json.Unmarshal(body, &e) == nil && e.Error == "not_found" &&
			(e.Reason == "Database does not exist." || e.Reason == "missing" || e.Reason == "deleted")
	}
	if !ok && len(o.bad) < 20 {
		o.bad = append(o.bad, fmt.Sprintf("%s: %d %s", what, status, strings.TrimSpace(string(body))))
	}
}

// Requests racing DELETE /{db} (continuous, longpoll and normal feeds,
// _bulk_docs, document and _local writes, reads) end as CouchDB 3.5.0
// ends them: answered normally, or with 404 not_found "Database does not
// exist." once the database is gone; a streamed feed just ends, and says
// nothing of a closed database. Never a 500 or 503. The database is
// deleted and made again several times under the load.
func TestRequestsRacingDeleteDB(t *testing.T) {
	ts := newTServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out := &deleteRaceOutcome{counts: map[string]int{}}
	var stop atomic.Bool
	do := func(what, method, path, body string) {
		req, _ := http.NewRequestWithContext(ctx, method, ts.url+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("%s: %v", what, err)
			}
			return
		}
		defer res.Body.Close()
		if strings.Contains(path, "feed=continuous") && res.StatusCode == 200 {
			// Rows until the database goes; no error row about a closed database.
			sc := bufio.NewScanner(res.Body)
			for sc.Scan() {
				if strings.Contains(sc.Text(), "closed") || strings.Contains(sc.Text(), "unknown_error") {
					out.note(what+" row", 500, sc.Bytes())
				}
			}
			out.note(what, res.StatusCode, nil)
			return
		}
		b, _ := io.ReadAll(res.Body)
		out.note(what, res.StatusCode, b)
	}
	var wg gosync.WaitGroup
	loop := func(fn func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load() && ctx.Err() == nil; i++ {
				fn(i)
			}
		}()
	}
	ts.must(201, "PUT", "/db", nil)
	for w := 0; w < 2; w++ {
		loop(func(i int) {
			docs := fmt.Sprintf(`{"docs":[{"_id":"b%d-%d"},{"_id":"c%d-%d","v":1}]}`, w, i, w, i)
			do("_bulk_docs", "POST", "/db/_bulk_docs", docs)
		})
	}
	loop(func(i int) { do("PUT doc", "PUT", fmt.Sprintf("/db/p%d", i), `{"x":1}`) })
	loop(func(i int) { do("PUT _local", "PUT", "/db/_local/cp", fmt.Sprintf(`{"n":%d}`, i)) })
	loop(func(i int) { do("GET doc", "GET", "/db/p0", "") })
	loop(func(i int) { do("GET info", "GET", "/db", "") })
	loop(func(i int) { do("_all_docs", "GET", "/db/_all_docs?limit=5&include_docs=true", "") })
	loop(func(i int) { do("normal feed", "GET", "/db/_changes?include_docs=true", "") })
	loop(func(i int) { do("longpoll feed", "GET", "/db/_changes?feed=longpoll&since=now&timeout=2000", "") })
	for f := 0; f < 2; f++ {
		loop(func(i int) {
			do("continuous feed", "GET", "/db/_changes?feed=continuous&heartbeat=500&include_docs=true", "")
		})
	}
	for round := 0; round < 6; round++ {
		time.Sleep(150 * time.Millisecond)
		if r := ts.do("DELETE", "/db", nil); r.status != 200 {
			t.Fatalf("round %d: DELETE /db: %d %s", round, r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
		if r := ts.do("PUT", "/db", nil); r.status != 201 && r.status != 412 {
			t.Fatalf("round %d: PUT /db: %d %s", round, r.status, r.body)
		}
	}
	ts.do("DELETE", "/db", nil) // ends the last feeds
	stop.Store(true)
	wg.Wait()
	t.Logf("answers: %v", out.counts)
	for _, b := range out.bad {
		t.Error(b)
	}
	if out.counts["_bulk_docs 404"] == 0 && out.counts["PUT doc 404"] == 0 {
		t.Errorf("no write met the deleted database: the race was not run: %v", out.counts)
	}
}
