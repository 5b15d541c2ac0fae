package jsfunc

import (
	"testing"

	"modernc.org/quickjs"
)

// BenchmarkParseFloor is the floor under a validate_doc_update call: the
// engine's JSON.parse of the new document alone (the harness's document
// and a small one), which every call must pay for newDoc to exist.
func BenchmarkParseFloor(b *testing.B) {
	for _, c := range []struct{ name, doc string }{{"doc=1k", datasetDoc}, {"doc=small", smallDoc}} {
		b.Run(c.name, func(b *testing.B) {
			vm, err := quickjs.NewVM()
			if err != nil {
				b.Fatal(err)
			}
			defer vm.Close()
			f, err := vm.EvalValue("(function (s) { JSON.parse(s); return 1; })", quickjs.EvalGlobal)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := f.Call(quickjs.UndefinedValue, c.doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
