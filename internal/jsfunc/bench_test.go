package jsfunc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/settee/settee/internal/procstat"
)

// BenchmarkValidate is one validate_doc_update call on a small new
// document, as settee serve makes for each document of a _bulk_docs: a
// function declaring three of its four arguments (secObj is not sent), and
// one declaring all four.
func BenchmarkValidate(b *testing.B) {
	for _, params := range []string{"newDoc, oldDoc, userCtx", "newDoc, oldDoc, userCtx, secObj"} {
		b.Run(fmt.Sprintf("args=%d", strings.Count(params, ",")+1), func(b *testing.B) {
			benchValidate(b, "function ("+params+") { if (typeof newDoc.n !== 'number') throw({forbidden: 'n must be a number'}); }", smallDoc)
		})
	}
	// A document of the benchmark harness's dataset (bench/body.go).
	b.Run("doc=1k", func(b *testing.B) {
		benchValidate(b, "function (newDoc, oldDoc, userCtx, secObj) { if (typeof newDoc.n !== 'number') throw({forbidden: 'n must be a number'}); }", datasetDoc)
	})
	// An update of it, by a validator that tests oldDoc first.
	b.Run("update=1k", func(b *testing.B) {
		benchValidateOld(b, "function (newDoc, oldDoc, userCtx, secObj) { if (oldDoc && oldDoc.type !== newDoc.type) throw({forbidden: 'type is fixed'}); }", datasetDoc, datasetDoc)
	})
}

const smallDoc = `{"_id":"d000000001","_rev":"1-0123456789abcdef0123456789abcdef","n":1,"text":"some body text to store","_revisions":{"start":1,"ids":["0123456789abcdef0123456789abcdef"]}}`

const datasetDoc = `{"_id":"doc-00000003","_rev":"1-0123456789abcdef0123456789abcdef","_revisions":{"start":1,"ids":["0123456789abcdef0123456789abcdef"]},"type":"invoice","n":3,"name":"maple smörgås","email":"ripple.8913@example.com","age":91,"score":185.803,"active":true,"manager":null,"tags":["mosaic"],"address":{"street":"392 raven street","city":"東京","zip":"33524","geo":[36.282427,-146.046705]},"history":[{"ts":1734437811688,"event":"commented","by":"mañana"}],"notes":"yarrow indigo onyx timber meadow stone Ελλάδα mañana hazel garnet pepper stone crème mosaic prairie utopia utopia prairie saffron zephyr summit quiver Zürich kestrel mosaic zephyr kestrel wander onyx naïve garnet onyx kestrel cloud delta timber wander delta lotus onyx prairie 東京 cloud prairie café meadow river quiver lotus Ελλάδα river river nectar juniper alpha naïve juniper pepper naïve vortex utopia juniper summit garnet quartz quiver smörgås nectar wander garnet river cloud Ελλάδα Zürich yarrow falcon café alpha river river meadow raven façade maple orbit harbor pepper lantern smörgås indigo smörgås façade velvet lotus vortex pepper river indigo über lotus saffron lantern prairie quiver Ελλάδα ember lotus copper copper mañana orbit garnet kestrel onyx alpha raven juniper quiver garnet quiver onyx onyx mañana yarrow copper tundra indigo hazel garnet raven mosaic"}`

func benchValidate(b *testing.B, src, newDoc string) { benchValidateOld(b, src, newDoc, "") }

func benchValidateOld(b *testing.B, src, newDoc, oldDoc string) {
	r, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ddoc := json.RawMessage(`{"_id":"_design/v","_rev":"1-0123456789abcdef0123456789abcdef","validate_doc_update":` + mustQuote(src) + `}`)
	doc := json.RawMessage(newDoc)
	user := json.RawMessage(`{"db":"db","name":null,"roles":["_admin"]}`)
	sec := json.RawMessage(`{"members":{"roles":["_admin"]},"admins":{"roles":["_admin"]}}`)
	b.ReportAllocs()
	cpu0 := procstat.CPU()
	for b.Loop() {
		if err := r.Validate(src, ddoc, doc, json.RawMessage(oldDoc), user, sec); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time: the machine is shared, wall time stretches with its load.
	b.ReportMetric(float64(procstat.CPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

func mustQuote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// BenchmarkMap is one map call on a document of the harness's dataset,
// with the map function of its views phase.
func BenchmarkMap(b *testing.B) {
	r, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	if err := r.SetMaps([]string{`function (doc) { if (doc.type) { emit([doc.type, doc.age], doc.score); } }`}, nil); err != nil {
		b.Fatal(err)
	}
	doc := []byte(datasetDoc)
	cpu0 := procstat.CPU()
	for b.Loop() {
		rows, err := r.Map(doc)
		if err != nil || len(rows) != 1 || len(rows[0]) != 1 {
			b.Fatal(rows, err)
		}
	}
	b.ReportMetric(float64(procstat.CPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkFilter is one filter call on a document of the harness's
// dataset, as a filtered _changes feed makes for each change: a filter
// naming a member of the document and of req, given only those, and
// given everything.
func BenchmarkFilter(b *testing.B) {
	src := "function (doc, req) { return doc.type === req.query.type; }"
	docs := json.RawMessage("[" + datasetDoc + "]")
	req := json.RawMessage(`{"info":{"db_name":"db","doc_count":100000,"update_seq":100000},"id":null,"uuid":"0123456789abcdef0123456789abcdef","method":"GET","requested_path":["db","_changes"],"path":["db","_changes"],"raw_path":"/db/_changes?filter=f/by_type&type=invoice","query":{"filter":"f/by_type","type":"invoice"},"headers":{"Accept":"application/json","Host":"127.0.0.1:5984"},"body":"undefined","peer":"127.0.0.1","form":{},"cookie":{},"userCtx":{"db":"db","name":"bob","roles":["member"]},"secObj":{"members":{"names":["bob"]}}}`)
	for _, whole := range []bool{false, true} {
		b.Run(fmt.Sprintf("whole=%v", whole), func(b *testing.B) {
			r, err := New(nil)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			r.whole = whole
			cpu0 := procstat.CPU()
			for b.Loop() {
				out, err := r.Filter(src, nil, docs, req)
				if err != nil || len(out) != 1 || !out[0] {
					b.Fatal(out, err)
				}
			}
			b.ReportMetric(float64(procstat.CPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
