package mobile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDeleteDatabaseAndExists(t *testing.T) {
	dbs := &Databases{}
	path := filepath.Join(t.TempDir(), "app.db")
	if dbs.Exists(path) {
		t.Fatal("Exists before the store was made")
	}
	d, err := dbs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	must(d.Put(`{"_id":"a"}`))
	if !Exists(path) {
		t.Fatal("Exists of an open store is false")
	}
	other, err := Open(path) // a second Database of the same file
	if err != nil {
		t.Fatal(err)
	}
	if err := dbs.Delete(path); ErrorCode(err) != CodeDatabaseOpen {
		t.Fatalf("Delete of an open store: %v", err)
	}
	must(0, d.Close())
	if err := DeleteDatabase(path); ErrorCode(err) != CodeDatabaseOpen {
		t.Fatalf("Delete with a second Database open: %v", err)
	}
	must(0, other.Close())
	if err := DeleteDatabase(path); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"", "-wal", "-shm"} {
		if _, err := os.Stat(path + s); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", path+s, err)
		}
	}
	if Exists(path) {
		t.Fatal("Exists after the delete")
	}
	if err := DeleteDatabase(path); ErrorCode(err) != CodeNotFound {
		t.Fatalf("Delete of a deleted store: %v", err)
	}
	// A new store at the same path starts empty.
	d, err = dbs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Get("a"); ErrorCode(err) != CodeNotFound {
		t.Fatalf("a came back: %v", err)
	}
}

func TestDocumentChangeListener(t *testing.T) {
	d := openTest(t)
	a, all := make(chan string, 10), make(chan string, 10)
	ta := must(d.AddDocumentChangeListener("a", listenerFunc(func(js string) { a <- js })))
	must(d.AddChangeListener(listenerFunc(func(js string) { all <- js })))
	if _, err := d.AddDocumentChangeListener("", listenerFunc(func(string) {})); ErrorCode(err) != CodeBadRequest {
		t.Fatalf("listener without an id: %v", err)
	}
	must(d.Put(`{"_id":"b"}`))
	rev := must(d.Put(`{"_id":"a"}`))
	if row := mustJSON(t, waitFor(t, a)); row["id"] != "a" {
		t.Fatalf("the listener of a heard %v", row)
	}
	waitFor(t, all)
	waitFor(t, all)
	ta.Remove()
	must(d.Delete("a", rev))
	waitFor(t, all)
	select {
	case js := <-a:
		t.Fatalf("a removed listener heard %s", js)
	default:
	}
}
