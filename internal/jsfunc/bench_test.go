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
			benchValidate(b, "function ("+params+") { if (typeof newDoc.n !== 'number') throw({forbidden: 'n must be a number'}); }")
		})
	}
}

func benchValidate(b *testing.B, src string) {
	r, err := New(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	ddoc := json.RawMessage(`{"_id":"_design/v","_rev":"1-0123456789abcdef0123456789abcdef","validate_doc_update":` + mustQuote(src) + `}`)
	doc := json.RawMessage(`{"_id":"d000000001","_rev":"1-0123456789abcdef0123456789abcdef","n":1,"text":"some body text to store","_revisions":{"start":1,"ids":["0123456789abcdef0123456789abcdef"]}}`)
	user := json.RawMessage(`{"db":"db","name":null,"roles":["_admin"]}`)
	sec := json.RawMessage(`{"members":{"roles":["_admin"]},"admins":{"roles":["_admin"]}}`)
	b.ReportAllocs()
	cpu0 := procstat.CPU()
	for b.Loop() {
		if err := r.Validate(src, ddoc, doc, nil, user, sec); err != nil {
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
