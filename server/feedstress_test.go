package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	gosync "sync"
	"testing"
	"time"
)

// Writers race with a continuous feed, a filtered continuous feed and a
// longpoll loop; each reader sees every change it should, exactly by id.
func TestFeedsMissNothingUnderConcurrentWrites(t *testing.T) {
	ts := newTServer(t, Config{})
	ts.must(201, "PUT", "/db", nil)
	const writers, perWriter = 4, 40
	total := writers * perWriter
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// follow reads a continuous feed until it has seen want ids.
	follow := func(query string, want int, out chan<- map[string]bool) {
		seen := map[string]bool{}
		defer func() { out <- seen }()
		req, _ := http.NewRequestWithContext(ctx, "GET", ts.url+"/db/_changes?feed=continuous&heartbeat=1000"+query, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for len(seen) < want && sc.Scan() {
			var row struct{ ID string }
			if line := sc.Text(); line != "" && json.Unmarshal([]byte(line), &row) == nil && row.ID != "" {
				seen[row.ID] = true
			}
		}
	}
	allc, evenc, pollc := make(chan map[string]bool, 1), make(chan map[string]bool, 1), make(chan map[string]bool, 1)
	var even []string
	for w := 0; w < writers; w++ {
		for i := 0; i < perWriter; i += 2 {
			even = append(even, fmt.Sprintf("w%d-%03d", w, i))
		}
	}
	evenIDs, _ := json.Marshal(even)
	go follow("", total, allc)
	go follow("&filter=_doc_ids&doc_ids="+string(evenIDs), len(even), evenc)
	go func() {
		seen := map[string]bool{}
		defer func() { pollc <- seen }()
		since := "0"
		for len(seen) < total && ctx.Err() == nil {
			req, _ := http.NewRequestWithContext(ctx, "GET", ts.url+"/db/_changes?feed=longpoll&timeout=5000&since="+since, nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			var a changesAnswer
			err = json.NewDecoder(res.Body).Decode(&a)
			res.Body.Close()
			if err != nil {
				return
			}
			for _, r := range a.Results {
				seen[r.ID] = true
			}
			since = fmt.Sprint(a.LastSeq)
		}
	}()

	var wg gosync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				body := strings.NewReader(`{"w":` + fmt.Sprint(w) + `}`)
				req, _ := http.NewRequestWithContext(ctx, "PUT", fmt.Sprintf("%s/db/w%d-%03d", ts.url, w, i), body)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				if res.StatusCode != 201 {
					t.Errorf("write: %d", res.StatusCode)
				}
			}
		}(w)
	}
	wg.Wait()
	for name, c := range map[string]chan map[string]bool{"continuous": allc, "filtered": evenc, "longpoll": pollc} {
		seen := <-c
		want := total
		if name == "filtered" {
			want = len(even)
		}
		if len(seen) != want {
			t.Errorf("%s feed saw %d of %d ids", name, len(seen), want)
		}
		if name == "filtered" {
			for id := range seen {
				if !strings.HasSuffix(id, "0") && !strings.HasSuffix(id, "2") && !strings.HasSuffix(id, "4") && !strings.HasSuffix(id, "6") && !strings.HasSuffix(id, "8") {
					t.Errorf("filtered feed let %s through", id)
				}
			}
		}
	}
}
