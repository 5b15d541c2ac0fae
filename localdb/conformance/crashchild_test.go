package conformance_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/localdbtest"
	"github.com/settee/settee/localdb/query"
)

// progressID is the child's checkpoint: the last batch it wrote.
const progressID = "_local/progress"

// Environment of the crash child (TestMain runs it instead of the tests).
const (
	crashChildEnv = "SETTEE_CRASH_CHILD_DB"    // database path
	crashStartEnv = "SETTEE_CRASH_CHILD_START" // first batch to write
	crashKillsEnv = "SETTEE_CRASH_KILLS"       // kills per run (default 24)
)

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		os.Exit(crashChild(path))
	}
	os.Exit(m.Run())
}

// A crash-test batch k is one BulkDocs call:
//   - docs "bNNNNNN-JJ" for J < batchSize(k), body {"batch": k, "j": J, ...};
//   - every third batch is replicated (new_edits=false) and gives each doc
//     a known two-revision history; the others are new_edits=true and also
//     set counter doc "cR" (R = k%4) to {"batch": k} with a new attachment
//     and delete the first doc of batch k-1;
//   - the second doc of a batch has an attachment of a few KB.
//
// So a batch that is there in part shows as a missing doc, a counter that
// is behind, or a first doc of the previous batch that is alive. After each
// batch the child also records its number in the local document
// _local/progress (a separate write, as a replicator's checkpoint is),
// after every fifth batch it compacts the database (dropping the bodies of
// revisions that are no longer leaves, in many small transactions), and
// only then acknowledges the batch.
func batchSize(k int) int { return 1 + k%9 }

func batchReplicated(k int) bool { return k%3 == 0 }

func batchDocID(k, j int) string { return fmt.Sprintf("b%06d-%02d", k, j) }

func counterID(k int) string { return "c" + strconv.Itoa(k%4) }

// attData is the content of a batch's attachment: a few KB that differ
// per document and batch.
func attData(id string, k int) []byte {
	return []byte(strings.Repeat(fmt.Sprintf("%s@%d;", id, k), 100+k%300))
}

func crashHash(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// replicatedRev is the rev of doc id in a replicated batch, with its history.
func replicatedRev(id string) (string, *couchdoc.Revisions) {
	h1, h2 := crashHash(id+"/1"), crashHash(id+"/2")
	return "2-" + h2, &couchdoc.Revisions{Start: 2, IDs: []string{h2, h1}}
}

func batchDocs(k int, revOf func(id string) (string, error)) ([]*couchdoc.Doc, error) {
	var docs []*couchdoc.Doc
	for j := 0; j < batchSize(k); j++ {
		id := batchDocID(k, j)
		body, _ := json.Marshal(map[string]any{"batch": k, "j": j, "pad": strings.Repeat("x", 1500*(j%4))})
		d := &couchdoc.Doc{ID: id, Body: body}
		if batchReplicated(k) {
			d.Rev, d.Revisions = replicatedRev(id)
		}
		if j == 1 {
			d.Attachments = map[string]*couchdoc.Attachment{"att": {Name: "att", ContentType: "text/plain", Data: attData(id, k), RevPos: 2}}
		}
		docs = append(docs, d)
	}
	if batchReplicated(k) {
		return docs, nil
	}
	c := counterID(k)
	rev, err := revOf(c)
	if err != nil {
		return nil, err
	}
	// A streamed body: staged in transactions of its own before the
	// batch's, whose commit adopts the staged chunks (localdb/attach_stage.go),
	// so kills land between the two as well.
	docs = append(docs, &couchdoc.Doc{ID: c, Rev: rev, Body: json.RawMessage(fmt.Sprintf(`{"batch":%d}`, k)),
		Attachments: map[string]*couchdoc.Attachment{"c.bin": {Name: "c.bin", ContentType: "application/octet-stream", Body: bytes.NewReader(attData(c, k))}}})
	if k > 1 {
		prev := batchDocID(k-1, 0)
		rev, err := revOf(prev)
		if err != nil {
			return nil, err
		}
		docs = append(docs, &couchdoc.Doc{ID: prev, Rev: rev, Deleted: true})
	}
	return docs, nil
}

// crashChild writes batches from SETTEE_CRASH_CHILD_START on, printing
// each batch number once BulkDocs has returned, until it is killed.
func crashChild(path string) int {
	start, err := strconv.Atoi(os.Getenv(crashStartEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child: bad start:", err)
		return 2
	}
	ctx := context.Background()
	db, err := localdb.Open(path, localdbtest.Options(nil))
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child: open:", err)
		return 2
	}
	// Mango indexes, kept in the batches' transactions, are checked
	// against the documents by CheckInvariants after every kill (a kill
	// can also land while one is created and built).
	for _, ix := range []string{
		`{"index": {"fields": ["batch", "j"]}, "ddoc": "crash", "name": "batch-j"}`,
		`{"index": {"fields": ["j"], "partial_filter_selector": {"j": {"$gt": 0}}}, "ddoc": "crash", "name": "j"}`,
	} {
		if _, err := query.CreateIndex(ctx, db, []byte(ix)); err != nil {
			fmt.Fprintln(os.Stderr, "crash child: create index:", err)
			return 2
		}
	}
	revs := map[string]string{}
	revOf := func(id string) (string, error) {
		if r, ok := revs[id]; ok {
			return r, nil
		}
		d, err := db.Get(ctx, id, localdb.GetOptions{})
		if errors.Is(err, couchdoc.ErrNotFound) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		return d.Rev, nil
	}
	progress := &couchdoc.Doc{ID: progressID}
	progressRev := ""
	if d, err := db.GetLocal(ctx, progressID); err == nil {
		progressRev = d.Rev
	} else if !errors.Is(err, couchdoc.ErrNotFound) {
		fmt.Fprintln(os.Stderr, "crash child: read progress:", err)
		return 3
	}
	for k := start; ; k++ {
		docs, err := batchDocs(k, revOf)
		if err != nil {
			fmt.Fprintln(os.Stderr, "crash child: read revs:", err)
			return 3
		}
		res, err := db.BulkDocs(ctx, docs, !batchReplicated(k))
		if err != nil {
			fmt.Fprintf(os.Stderr, "crash child: batch %d: %v\n", k, err)
			return 3
		}
		for i, r := range res {
			if r.Error != "" {
				fmt.Fprintf(os.Stderr, "crash child: batch %d doc %d: %s %s\n", k, i, r.Error, r.Reason)
				return 3
			}
			if i < len(docs) && r.Rev != "" {
				revs[docs[i].ID] = r.Rev
			}
		}
		progress.Rev, progress.Body = progressRev, json.RawMessage(fmt.Sprintf(`{"batch":%d}`, k))
		if progressRev, err = db.PutLocal(ctx, progress); err != nil {
			fmt.Fprintf(os.Stderr, "crash child: progress %d: %v\n", k, err)
			return 3
		}
		if k%5 == 0 {
			if err := db.Compact(ctx); err != nil {
				fmt.Fprintf(os.Stderr, "crash child: compact after %d: %v\n", k, err)
				return 3
			}
		}
		if _, err := os.Stdout.WriteString(strconv.Itoa(k) + "\n"); err != nil {
			return 4
		}
	}
}
