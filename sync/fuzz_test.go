package sync

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzReplicationLogs feeds arbitrary replication logs (as a peer could
// hold them) to the checkpoint comparison: it must never panic, and a
// start sequence it returns must come from one of the logs.
func FuzzReplicationLogs(f *testing.F) {
	f.Add([]byte(`{"session_id":"a","source_last_seq":5,"history":[{"session_id":"a","recorded_seq":5}]}`),
		[]byte(`{"session_id":"a","source_last_seq":5,"history":[]}`))
	f.Add([]byte(`{"session_id":"b","history":[{"session_id":"b","recorded_seq":"9-x"},{"session_id":"a","recorded_seq":"3-x"}]}`),
		[]byte(`{"session_id":"c","history":[{"session_id":"c"},{"session_id":"a","recorded_seq":"3-y"}]}`))
	f.Add([]byte(`null`), []byte(`[]`))
	f.Add([]byte(`{"history":"nope"}`), []byte(`{"session_id":7}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		src, tgt := newMemPeer("src"), newMemPeer("tgt")
		src.loc["id"], tgt.loc["id"] = a, b
		la, err := readLog(context.Background(), src, "id")
		if err != nil {
			t.Fatal(err)
		}
		lb, err := readLog(context.Background(), tgt, "id")
		if err != nil {
			t.Fatal(err)
		}
		seq, _ := compareLogs(la, lb)
		if seq == nil {
			return
		}
		if !json.Valid(seq) {
			t.Fatalf("start seq %q is not JSON", seq)
		}
	})
}
