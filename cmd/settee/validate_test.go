package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settee/settee/server/servertest"
)

// TestValidateAs: --validate-as runs the store's validate_doc_update on
// put, delete, attachment put and a pull's writes, as the user it names;
// without it nothing is validated, as in PouchDB.
func TestValidateAs(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "v.db")
	vdu, _ := json.Marshal(map[string]string{"validate_doc_update": `function (newDoc, oldDoc, userCtx) {
		if (newDoc.owner && newDoc.owner !== userCtx.name) throw({forbidden: 'not yours'});
		if (newDoc._deleted) throw({unauthorized: 'no deletes'});
		if (newDoc._attachments && !oldDoc.attachable) throw({forbidden: 'no attachments'});
	}`})
	ok(t, "put", db, "_design/rules", string(vdu))
	as := `{"name":"ann","roles":["editor"]}`
	ok(t, "put", db, "--validate-as", as, "a", `{"owner":"ann"}`)
	failsWith(t, cli(t, nil, "put", db, "--validate-as", as, "b", `{"owner":"bob"}`), exitAuth, "forbidden", "not yours")
	failsWith(t, cli(t, nil, "get", db, "b"), exitNotFound)
	failsWith(t, cli(t, nil, "delete", db, "--validate-as", as, "a"), exitAuth, "no deletes")
	file := filepath.Join(dir, "x.txt")
	ok(t, "attachment", "put", db, "a", "x.txt", "--update", writeFileT(t, file, "hi"))
	ok(t, "put", db, "c", `{}`)
	failsWith(t, cli(t, nil, "attachment", "put", db, "c", "x.txt", "--update", "--validate-as", as, file), exitAuth, "no attachments")
	failsWith(t, cli(t, nil, "put", db, "--validate-as", `["ann"]`, "d", `{}`), exitUsage, "--validate-as")
	ok(t, "put", db, "b", `{"owner":"bob"}`) // without the flag, PouchDB's way

	// A pull: the refused revisions are doc_write_failures, the rest is
	// written.
	u := servertest.Start(t, nil).CreateDB(t, "src")
	src := filepath.Join(dir, "src.db")
	for i := range 10 {
		owner := "ann"
		if i%3 == 0 {
			owner = "bob"
		}
		ok(t, "put", src, fmt.Sprintf("d%d", i), fmt.Sprintf(`{"owner":%q}`, owner))
	}
	ok(t, "push", src, u)
	dst := filepath.Join(dir, "dst.db")
	ok(t, "put", dst, "_design/rules", string(vdu))
	r := cli(t, nil, "pull", "--json", "--validate-as", as, dst, u)
	if !strings.Contains(r.stdout, `"doc_write_failures":4`) {
		t.Fatalf("pull: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	for i := range 10 {
		got := cli(t, nil, "get", dst, fmt.Sprintf("d%d", i))
		if refused := i%3 == 0; refused != (got.code == exitNotFound) {
			t.Errorf("d%d: exit %d (refused: %v)", i, got.code, refused)
		}
	}
}

func writeFileT(t *testing.T, path, s string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
