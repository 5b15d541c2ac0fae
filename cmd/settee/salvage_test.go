package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// salvageDocs is how many documents the damaged stores hold: enough pages
// that the changes feed reads several of export's pages before it meets
// the damage.
const salvageDocs = 3000

// TestSalvageNeverDuplicates damages a store in many ways (truncated,
// zeroed pages, flipped bits in the pages of the docs table and of its
// indexes and of the revision bodies, a torn WAL) and checks that what
// check counts and what export --skip-unreadable writes are the original
// documents, each at most once, and that the two agree.
func TestSalvageNeverDuplicates(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.db")
	orig := salvageStore(t, base)
	pages, psize := storePages(t, base)
	st, err := os.Stat(base)
	if err != nil {
		t.Fatal(err)
	}
	size := st.Size()
	type damage struct {
		name string
		fn   func(t *testing.T, path string)
	}
	var cases []damage
	for _, frac := range []int64{35, 60, 90} {
		cases = append(cases, damage{fmt.Sprintf("truncated at %d%%", frac), func(t *testing.T, p string) {
			if err := os.Truncate(p, size*frac/100/psize*psize); err != nil {
				t.Fatal(err)
			}
		}})
	}
	for _, tbl := range []string{"docs", "sqlite_autoindex_docs_1", "sqlite_autoindex_docs_2", "revs"} {
		list := pages[tbl]
		if len(list) == 0 {
			t.Fatalf("no pages of %s in %v", tbl, keys(pages))
		}
		for _, at := range []int{len(list) / 3, len(list) * 2 / 3} {
			pg := list[at]
			cases = append(cases,
				damage{fmt.Sprintf("%s page %d zeroed", tbl, pg), func(t *testing.T, p string) {
					writeAt(t, p, (pg-1)*psize, make([]byte, psize))
				}},
				damage{fmt.Sprintf("%s page %d bits flipped", tbl, pg), func(t *testing.T, p string) {
					flipBits(t, p, (pg-1)*psize, psize)
				}})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "d.db")
			copyFile(t, base, p)
			tc.fn(t, p)
			checkSalvage(t, p, orig)
		})
	}
	t.Run("torn WAL", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "w.db")
		checkSalvage(t, p, tornWAL(t, p))
	})
}

// checkSalvage runs check and export --skip-unreadable on the store at p
// and fails unless each lists only documents of orig, each at most once,
// and export writes no more documents than check counts.
func checkSalvage(t *testing.T, p string, orig map[string]bool) {
	t.Helper()
	r := cli(t, nil, "check", p)
	var rep checkReport
	if r.stdout != "" {
		mustJSON(t, r.stdout, &rep)
	}
	if rep.Docs > salvageDocs {
		t.Errorf("check counts %d documents of %d", rep.Docs, salvageDocs)
	}
	for _, id := range rep.Unreadable {
		if !strings.HasPrefix(id, "(") && !orig[id] {
			t.Errorf("check names %q, not a document of the store", id)
		}
	}
	e := cli(t, nil, "export", p, "--skip-unreadable")
	seen := map[string]bool{}
	var dups, foreign []string
	sc := bufio.NewScanner(strings.NewReader(e.stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var d struct {
			ID string `json:"_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		if seen[d.ID] {
			dups = append(dups, d.ID)
		}
		if !orig[d.ID] {
			foreign = append(foreign, d.ID)
		}
		seen[d.ID] = true
	}
	if len(dups) > 0 {
		t.Errorf("export writes %d documents more than once, such as %q", len(dups), dups[0])
	}
	if len(foreign) > 0 {
		t.Errorf("export writes %d documents the store never had, such as %q", len(foreign), foreign[0])
	}
	if rep.Docs > 0 && int64(len(seen)) > rep.Docs {
		t.Errorf("export writes %d documents, check counts %d", len(seen), rep.Docs)
	}
	t.Logf("check: exit %d, %d docs, %d unreadable; export: exit %d, %d docs", r.code, rep.Docs, rep.NUnread, e.code, len(seen))
}

// salvageStore imports salvageDocs documents (one revision each) into a
// new store at path and returns their ids.
func salvageStore(t *testing.T, path string) map[string]bool {
	t.Helper()
	var b strings.Builder
	ids := map[string]bool{}
	for i := range salvageDocs {
		id := fmt.Sprintf("doc-%05d", i)
		ids[id] = true
		fmt.Fprintf(&b, `{"_id":%q,"n":%d,"text":%q}`+"\n", id, i, strings.Repeat("x", 200))
	}
	if r := cliIn(t, []byte(b.String()), "import", path); r.code != 0 {
		t.Fatal(r.stderr)
	}
	return ids
}

// storePages lists the pages (numbered from 1) of each table and index of
// the store at path, in file order, and the size of a page.
func storePages(t *testing.T, path string) (map[string][]int64, int64) {
	t.Helper()
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var size int64
	if err := db.QueryRow("PRAGMA page_size").Scan(&size); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT name, pageno FROM dbstat ORDER BY pageno")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]int64{}
	for rows.Next() {
		var name string
		var pg int64
		if err := rows.Scan(&name, &pg); err != nil {
			t.Fatal(err)
		}
		out[name] = append(out[name], pg)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out, size
}

// tornWAL leaves at p a store whose last writes are in its WAL, the last
// frame of which is cut in half, as a crash in mid-write leaves it, and
// returns the ids written.
func tornWAL(t *testing.T, p string) map[string]bool {
	t.Helper()
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "live.db")
	db, err := localdb.Open(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ids := map[string]bool{}
	for i := range salvageDocs / 10 {
		ids[fmt.Sprintf("doc-%05d", i)] = true
		doc := &couchdoc.Doc{ID: fmt.Sprintf("doc-%05d", i), Body: json.RawMessage(`{"text":"` + strings.Repeat("y", 300) + `"}`)}
		if _, err := db.Put(ctx, doc); err != nil {
			t.Fatal(err)
		}
	}
	// Copy the file and its WAL while the store is open: a crash's view.
	copyFile(t, src, p)
	copyFile(t, src+"-wal", p+"-wal")
	st, err := os.Stat(p + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() < 3*8192 {
		t.Fatalf("WAL of %d bytes: the writes were checkpointed", st.Size())
	}
	if err := os.Truncate(p+"-wal", st.Size()-2048); err != nil {
		t.Fatal(err)
	}
	return ids
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func writeAt(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// flipBits flips one bit in every 61 bytes of the n bytes at off.
func flipBits(t *testing.T, path string, off, n int64) {
	t.Helper()
	b := make([]byte, n)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.ReadAt(b, off)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(b); i += 61 {
		b[i] ^= 1 << (i % 8)
	}
	writeAt(t, path, off, b)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
