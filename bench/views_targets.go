package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/procstat"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/query"
)

// httpViews is a server's database: settee serve or CouchDB.
type httpViews struct {
	label string
	db    string
	cpuf  cpuFunc
	srv   *pouchServer // stopped on close when set
	keep  bool
}

func (h *httpViews) name() string { return h.label }
func (h *httpViews) cpu() float64 { return h.cpuf() }
func (h *httpViews) close() {
	if !h.keep {
		_ = deleteDB(context.Background(), h.db)
	}
	h.srv.Stop()
}

func (h *httpViews) load(ctx context.Context, ds *Dataset) error {
	if err := createDB(ctx, h.db); err != nil {
		return err
	}
	docs := make(chan *GenDoc, 256)
	go func() {
		defer close(docs)
		for i := range ds.Count() {
			g := ds.Doc(i)
			g.Att = nil
			select {
			case docs <- g:
			case <-ctx.Done():
				return
			}
		}
	}()
	_, err := sendDocs(ctx, h.db, docs)
	for range docs { // drain on error
	}
	return err
}

func (h *httpViews) putDesign(ctx context.Context, name string, body []byte) error {
	return httpDo(ctx, http.MethodPut, h.db+"/_design/"+name, bytes.NewReader(body), "application/json", nil)
}

func (h *httpViews) query(ctx context.Context, ddoc, view string, q url.Values) (func() ([]byte, error), error) {
	var raw json.RawMessage
	u := h.db + "/_design/" + ddoc + "/_view/" + view
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	if err := httpDo(ctx, http.MethodGet, u, nil, "", &raw); err != nil {
		return nil, err
	}
	return func() ([]byte, error) { return raw, nil }, nil
}

func (h *httpViews) edit(ctx context.Context, ds *Dataset) (int, error) {
	res, err := loadEdits(ctx, ds, h.db)
	if err != nil {
		return 0, err
	}
	return res.Stats.Docs, nil
}

// localViews is a store in this process, queried with query.View.
type localViews struct {
	path string
	db   *localdb.DB
}

func openLocalViews(_ context.Context, path string) (*localViews, error) {
	removeStore(path)
	db, err := localdb.Open(path, nil)
	if err != nil {
		return nil, err
	}
	return &localViews{path: path, db: db}, nil
}

func (l *localViews) name() string { return "settee (in process)" }
func (l *localViews) cpu() float64 { return procstat.CPU().Seconds() }
func (l *localViews) close() {
	_ = l.db.Close()
	removeStore(l.path)
	_ = os.RemoveAll(l.path + ".views")
}

// bulk writes docs with new_edits=false, failing on any document's error.
func (l *localViews) bulk(ctx context.Context, docs []*couchdoc.Doc) error {
	res, err := l.db.BulkDocs(ctx, docs, false)
	if err != nil {
		return err
	}
	for _, x := range res {
		if x.Error != "" {
			return fmt.Errorf("doc %q: %s: %s", x.ID, x.Error, x.Reason)
		}
	}
	return nil
}

// leafDocs returns a generated document's leaves as replicated revisions.
func leafDocs(g *GenDoc) []*couchdoc.Doc {
	var docs []*couchdoc.Doc
	for _, lf := range g.Leaves {
		docs = append(docs, &couchdoc.Doc{ID: g.ID, Rev: lf.Rev(), Deleted: lf.Deleted, Body: lf.Body,
			Revisions: &couchdoc.Revisions{Start: lf.Start, IDs: lf.IDs}})
	}
	return docs
}

func (l *localViews) load(ctx context.Context, ds *Dataset) error {
	batch := make([]*couchdoc.Doc, 0, indexWriteBatch+2)
	for i := range ds.Count() {
		batch = append(batch, leafDocs(ds.Doc(i))...)
		if len(batch) >= indexWriteBatch || i == ds.Count()-1 {
			if err := l.bulk(ctx, batch); err != nil {
				return err
			}
			batch = make([]*couchdoc.Doc, 0, indexWriteBatch+2)
		}
	}
	return nil
}

func (l *localViews) edit(ctx context.Context, ds *Dataset) (int, error) {
	var batch []*couchdoc.Doc
	for i := range ds.Count() {
		if !ds.Changed(i) {
			continue
		}
		g, err := ds.Edit(i)
		if err != nil {
			return 0, err
		}
		batch = append(batch, leafDocs(g)...)
	}
	return len(batch), l.bulk(ctx, batch)
}

func (l *localViews) putDesign(ctx context.Context, name string, body []byte) error {
	res, err := l.db.BulkDocs(ctx, []*couchdoc.Doc{{ID: "_design/" + name, Body: body}}, true)
	if err != nil {
		return err
	}
	if res[0].Error != "" {
		return fmt.Errorf("%s: %s", res[0].Error, res[0].Reason)
	}
	return nil
}

func (l *localViews) query(ctx context.Context, ddoc, view string, q url.Values) (func() ([]byte, error), error) {
	o, err := query.ViewOptionsFromURL(q)
	if err != nil {
		return nil, err
	}
	res, err := query.View(ctx, l.db, ddoc, view, o)
	if err != nil {
		return nil, err
	}
	return func() ([]byte, error) { return json.Marshal(res) }, nil
}

// treeCPU is the user+system CPU seconds of a process and its descendants
// (with the reaped children's), so that CouchDB's JavaScript processes
// count; 0 when pid is not given.
func treeCPU(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStatFields(p); len(f) > 1 {
			pp, _ := strconv.Atoi(f[1])
			children[pp] = append(children[pp], p)
		}
	}
	total := 0.0
	todo := []int{pid}
	for len(todo) > 0 && len(todo) < 1<<16 {
		p := todo[len(todo)-1]
		todo = append(todo[:len(todo)-1], children[p]...)
		if f := procStatFields(p); len(f) >= 15 {
			for _, k := range []int{11, 12, 13, 14} { // utime stime cutime cstime
				v, _ := strconv.ParseInt(f[k], 10, 64)
				total += float64(v) / 100
			}
		}
	}
	return total
}

// procStatFields returns /proc/<pid>/stat's fields after the command name.
func procStatFields(pid int) []string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(data[i+1:]))
}

// viewAnswer is the part of a _view answer the contenders must agree on.
type viewAnswer struct {
	TotalRows *int64 `json:"total_rows"`
	Offset    *int64 `json:"offset"`
	Rows      []struct {
		ID    string `json:"id"`
		Key   any    `json:"key"`
		Value any    `json:"value"`
		Doc   *struct {
			ID  string `json:"_id"`
			Rev string `json:"_rev"`
		} `json:"doc"`
	} `json:"rows"`
}

// sameViewAnswers compares two answers: rows, ids, keys, documents'
// revisions and values (numbers within a relative 1e-9: sums of floats
// depend on their order), total_rows and offset.
func sameViewAnswers(a, b []byte) error {
	var x, y viewAnswer
	if err := json.Unmarshal(a, &x); err != nil {
		return err
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return err
	}
	if !reflect.DeepEqual(x.TotalRows, y.TotalRows) || !reflect.DeepEqual(x.Offset, y.Offset) {
		return fmt.Errorf("total_rows/offset %v/%v against %v/%v", ptrVal(x.TotalRows), ptrVal(x.Offset), ptrVal(y.TotalRows), ptrVal(y.Offset))
	}
	if len(x.Rows) != len(y.Rows) {
		return fmt.Errorf("%d rows against %d", len(x.Rows), len(y.Rows))
	}
	for i := range x.Rows {
		r, s := x.Rows[i], y.Rows[i]
		if r.ID != s.ID || !reflect.DeepEqual(r.Key, s.Key) || !closeJSON(r.Value, s.Value) || !reflect.DeepEqual(r.Doc, s.Doc) {
			return fmt.Errorf("row %d: %s against %s", i, mustJSON(r), mustJSON(s))
		}
	}
	return nil
}

func ptrVal(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// closeJSON compares decoded JSON values, numbers within a relative 1e-9.
func closeJSON(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Abs(x-y) <= 1e-9*math.Max(1, math.Max(math.Abs(x), math.Abs(y)))
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !closeJSON(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !closeJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
