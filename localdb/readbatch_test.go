package localdb_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// describe renders an answer with everything a replication reads of it.
func describe(t testing.TB, id string, r localdb.OpenRev, err error) string {
	t.Helper()
	if err != nil {
		var ce *couchdoc.Error
		if !errors.As(err, &ce) {
			t.Fatalf("%s: untyped error %v", id, err)
		}
		return fmt.Sprintf("%s error %s", id, ce.Name)
	}
	if r.Doc == nil {
		return fmt.Sprintf("%s missing %s", id, r.Missing)
	}
	d := r.Doc
	if d.ID != id {
		t.Fatalf("doc %q handed with id %q", d.ID, id)
	}
	s := fmt.Sprintf("%s %s del=%v %s", id, d.Rev, d.Deleted, d.Body)
	if d.Revisions != nil {
		s += fmt.Sprintf(" revs=%d%v", d.Revisions.Start, d.Revisions.IDs)
	}
	for _, name := range sortedKeys(d.Attachments) {
		a := d.Attachments[name]
		switch {
		case a.Stub:
			s += fmt.Sprintf(" %s:stub@%d", name, a.RevPos)
		case a.Body != nil:
			b, err := io.ReadAll(a.Body)
			if err != nil {
				t.Fatal(err)
			}
			a.Body.(io.Closer).Close()
			s += fmt.Sprintf(" %s:body%d", name, len(b))
		default:
			s += fmt.Sprintf(" %s:data=%q", name, a.Data)
		}
	}
	return s
}

func sortedKeys(m map[string]*couchdoc.Attachment) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func batch(t *testing.T, db *localdb.DB, reqs []localdb.RevsRequest, opts localdb.GetOptions) []string {
	t.Helper()
	var got []string
	err := db.OpenRevsBatch(bg, reqs, opts, func(id string, r localdb.OpenRev, err error) error {
		got = append(got, describe(t, id, r, err))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// oneByOne answers the same requests with OpenRevs, one call each.
func oneByOne(t *testing.T, db *localdb.DB, reqs []localdb.RevsRequest, opts localdb.GetOptions) []string {
	t.Helper()
	var got []string
	for _, q := range reqs {
		o := opts
		if q.AttsSince != nil {
			o.AttsSince = q.AttsSince
		}
		res, err := db.OpenRevs(bg, q.ID, q.Revs, o)
		if err != nil {
			got = append(got, describe(t, q.ID, localdb.OpenRev{}, err))
			continue
		}
		for _, r := range res {
			got = append(got, describe(t, q.ID, r, nil))
		}
	}
	return got
}

// batchFixture stores: "lin" 1-a..3-c; "conf" with a live leaf 2-b and a
// deleted leaf 3-d; "gone" deleted; "att" with a.txt at 1 and b.bin at 2.
func batchFixture(t *testing.T) (*localdb.DB, string, string) {
	db := open(t)
	repl(t, db, "lin", false, `{"v":3}`, "3-c", "2-b", "1-a")
	repl(t, db, "conf", false, `{"v":1}`, "1-a")
	repl(t, db, "conf", false, `{"v":2}`, "2-b", "1-a")
	repl(t, db, "conf", false, `{"v":3}`, "2-c", "1-a")
	repl(t, db, "conf", true, `{}`, "3-d", "2-c", "1-a")
	repl(t, db, "gone", false, `{"v":1}`, "1-a")
	repl(t, db, "gone", true, `{}`, "2-b", "1-a")
	r1, err := db.Put(bg, &couchdoc.Doc{ID: "att", Attachments: map[string]*couchdoc.Attachment{"a.txt": {Data: []byte("hello")}}})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := db.Put(bg, &couchdoc.Doc{ID: "att", Rev: r1, Body: []byte(`{"v":2}`), Attachments: map[string]*couchdoc.Attachment{
		"a.txt": {Stub: true}, "b.bin": {Data: []byte{1, 2, 3}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return db, r1, r2
}

func TestOpenRevsBatchAnswers(t *testing.T) {
	db, r1, r2 := batchFixture(t)
	reqs := []localdb.RevsRequest{
		{ID: "lin", Revs: []string{"3-c"}},
		{ID: "lin", Revs: []string{"1-a", "9-f"}}, // an ancestor (latest: its leaf) and a rev we lack
		{ID: "conf"},                                             // every leaf, the deleted one too
		{ID: "conf", Revs: []string{"1-a"}},                      // latest: both leaves
		{ID: "gone", Revs: []string{"2-b"}},                      // a deleted leaf
		{ID: "nope", Revs: []string{"1-a", "2-b"}},               // a missing document: every rev missing
		{ID: "nope"},                                             // ... and all leaves of it: not found
		{ID: "lin", Revs: []string{"bad"}},                       // a malformed rev fails that request only
		{ID: "att", Revs: []string{r2}, AttsSince: []string{r1}}, // only b.bin is newer
		{ID: "att", Revs: []string{r2}},                          // all bytes
		{ID: "lin", Revs: []string{"3-c"}},                       // after failures, the batch goes on
	}
	opts := localdb.GetOptions{Revs: true, Latest: true, Attachments: true}
	got := batch(t, db, reqs, opts)
	want := []string{
		`lin 3-c del=false {"v":3} revs=3[c b a]`,
		`lin 3-c del=false {"v":3} revs=3[c b a]`,
		`lin missing 9-f`,
		`conf 2-b del=false {"v":2} revs=2[b a]`,
		`conf 3-d del=true {} revs=3[d c a]`,
		`conf 2-b del=false {"v":2} revs=2[b a]`,
		`conf 3-d del=true {} revs=3[d c a]`,
		`gone 2-b del=true {} revs=2[b a]`,
		`nope missing 1-a`,
		`nope missing 2-b`,
		`nope error not_found`,
		`lin error bad_request`,
		`att ` + r2 + ` del=false {"v":2} revs=2[` + r2[2:] + ` ` + r1[2:] + `] a.txt:stub@1 b.bin:data="\x01\x02\x03"`,
		`att ` + r2 + ` del=false {"v":2} revs=2[` + r2[2:] + ` ` + r1[2:] + `] a.txt:data="hello" b.bin:data="\x01\x02\x03"`,
		`lin 3-c del=false {"v":3} revs=3[c b a]`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Without Latest an ancestor is itself (its body kept: replicated with
	// one); request-level AttsSince overrides the options'.
	got = batch(t, db, []localdb.RevsRequest{{ID: "lin", Revs: []string{"2-b"}}, {ID: "att", Revs: []string{r2}, AttsSince: []string{r1}}},
		localdb.GetOptions{AttsSince: []string{"1-zzz"}})
	want = []string{
		`lin missing 2-b`, // replicated as history only: no body stored
		`att ` + r2 + ` del=false {"v":2} a.txt:stub@1 b.bin:data="\x01\x02\x03"`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The same as OpenRevs, request by request.
	for _, o := range []localdb.GetOptions{opts, {}, {Revs: true, Conflicts: true}} {
		if b, s := batch(t, db, reqs, o), oneByOne(t, db, reqs, o); !reflect.DeepEqual(b, s) {
			t.Fatalf("opts %+v: batch\n%s\nOpenRevs\n%s", o, strings.Join(b, "\n"), strings.Join(s, "\n"))
		}
	}
}

// Many documents: past a query's 64 rows and past the byte bound (a new
// transaction), answers keep their order and large attachments stream.
func TestOpenRevsBatchGroups(t *testing.T) {
	db := open(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // 128 KiB: a lazy Body
	if _, err := db.Put(bg, &couchdoc.Doc{ID: "big", Attachments: map[string]*couchdoc.Attachment{"blob": {Data: big}}}); err != nil {
		t.Fatal(err)
	}
	docs := make([]*couchdoc.Doc, 150)
	for i := range docs {
		docs[i] = replDoc(t, fmt.Sprintf("d%03d", i), i%7 == 0, fmt.Sprintf(`{"i":%d}`, i), fmt.Sprintf("2-%x", i+1), fmt.Sprintf("1-%x", i+1))
	}
	if _, err := db.BulkDocs(bg, docs, false); err != nil {
		t.Fatal(err)
	}
	var reqs []localdb.RevsRequest
	for i := 149; i >= 0; i-- { // not in table order
		reqs = append(reqs, localdb.RevsRequest{ID: docs[i].ID, Revs: []string{docs[i].Rev}})
		if i == 70 {
			reqs = append(reqs, localdb.RevsRequest{ID: "big"}, localdb.RevsRequest{ID: "missing"})
		}
	}
	opts := localdb.GetOptions{Revs: true, Latest: true, Attachments: true}
	want := oneByOne(t, db, reqs, opts)
	if len(want) != 152 || !strings.Contains(want[80], "blob:body131072") {
		t.Fatalf("fixture: %d answers, %q", len(want), want[80])
	}
	for _, n := range []int{4 << 20, 100, 1} {
		restore := localdb.SetBatchBytes(n)
		got := batch(t, db, reqs, opts)
		restore()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("bound %d: got\n%s\nwant\n%s", n, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// fn's error stops the batch and is returned; a done context is a store
// error; a closed store is ErrClosed.
func TestOpenRevsBatchStops(t *testing.T) {
	db, _, _ := batchFixture(t)
	reqs := []localdb.RevsRequest{{ID: "lin"}, {ID: "conf"}, {ID: "gone"}}
	stop := errors.New("stop")
	calls := 0
	err := db.OpenRevsBatch(bg, reqs, localdb.GetOptions{}, func(string, localdb.OpenRev, error) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(bg)
	cancel()
	err = db.OpenRevsBatch(ctx, reqs, localdb.GetOptions{}, func(string, localdb.OpenRev, error) error {
		t.Fatal("fn called with a done context")
		return nil
	})
	if err == nil {
		t.Fatal("no error with a done context")
	}
	if err := db.OpenRevsBatch(bg, nil, localdb.GetOptions{}, nil); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	closed, err := localdb.Open(filepath.Join(t.TempDir(), "closed.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	err = closed.OpenRevsBatch(bg, reqs, localdb.GetOptions{}, func(string, localdb.OpenRev, error) error { return nil })
	wantErr(t, err, localdb.ErrClosed)
}
