package couch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/procstat"
	"github.com/settee/settee/sync"
)

// BenchmarkChangesConnBuffer reads a 2,000-row changes feed with 1-KB
// documents (about 2.4 MB, sent in 64-KB writes) through the default
// transport with net/http's 4-KB connection buffers and with
// connBufferSize, and reports the read system calls per feed
// (/proc/self/io syscr).
func BenchmarkChangesConnBuffer(b *testing.B) {
	var feed strings.Builder
	feed.WriteString(`{"results":[`)
	pad := strings.Repeat("x", 1000)
	for i := 0; i < 2000; i++ {
		if i > 0 {
			feed.WriteByte(',')
		}
		fmt.Fprintf(&feed, `{"seq":%d,"id":"d%05d","changes":[{"rev":"1-a"}],"doc":{"_id":"d%05d","_rev":"1-a","pad":%q}}`, i+1, i, i, pad)
	}
	feed.WriteString(`],"last_seq":2000}`)
	body := feed.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for s := body; len(s) > 0; {
			n := min(len(s), 64<<10)
			w.Write([]byte(s[:n]))
			w.(http.Flusher).Flush()
			s = s[n:]
		}
	}))
	defer srv.Close()
	for _, size := range []int{0, connBufferSize} {
		b.Run("buffer="+strconv.Itoa(size), func(b *testing.B) {
			tr, err := NewTransport(nil)
			if err != nil {
				b.Fatal(err)
			}
			tr.ReadBufferSize, tr.WriteBufferSize = size, size
			db, err := New(srv.URL+"/db", &Options{Transport: tr})
			if err != nil {
				b.Fatal(err)
			}
			r0 := readSyscalls(b)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n := 0
				if _, err := db.Changes(context.Background(), sync.ChangesOptions{IncludeDocs: true}, func(*couchdoc.Change) error { n++; return nil }); err != nil || n != 2000 {
					b.Fatal(n, err)
				}
			}
			b.ReportMetric(float64(readSyscalls(b)-r0)/float64(b.N), "reads/op")
		})
	}
}

// readSyscalls is this process's read system calls so far.
func readSyscalls(b *testing.B) int64 {
	n, ok := procstat.IO("syscr")
	if !ok {
		b.Skip("no syscr in /proc/self/io")
	}
	return n
}
