package jsfunc

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMembersRead(t *testing.T) {
	none := []string(nil)
	for _, c := range []struct {
		fn   string
		want [4][]string
	}{
		{"function (newDoc, oldDoc, userCtx, secObj) { if (!newDoc._deleted && typeof newDoc.type !== 'string') throw({forbidden: 'x'}); }",
			[4][]string{{"_deleted", "type"}, {}, {}, {}}},
		{"function(n, o, u) { if (o && o.owner !== u.name) throw({unauthorized: n.owner}); }",
			[4][]string{{"owner"}, {"owner"}, {"name"}, none}},
		// Tests of oldDoc that run none of its code and yield no reference.
		{"function (n, o) { if (!o) return; if (o) {} while (o) { break; } if (typeof o === 'object' && o !== null && o == null) {} return o === n.x ? 1 : 2; }",
			[4][]string{{"x"}, {}, none, none}},
		{"function (n, o) { var ok = !!o && (o == undefined || o.a); }", [4][]string{{}, {"a"}, none, none}},
		// Uses that can yield the object or run its code.
		{"function (n, o) { var d = o || {}; }", [4][]string{{}, none, none, none}},
		{"function (n, o) { if (x + o && y) {} }", [4][]string{{}, none, none, none}},
		{"function (n, o) { if (o == null + 1) {} }", [4][]string{{}, none, none, none}},
		{"function (n, o) { if (o == 'x') {} }", [4][]string{{}, none, none, none}},
		{"function (n, o) { if (!o[k]) {} }", [4][]string{{}, none, none, none}},
		{"function (n, o) { if (!o?.k) {} }", [4][]string{{}, none, none, none}},
		{"function (n, o) { o &&= n; }", [4][]string{none, none, none, none}},
		{"function (n, o) { var d = a ? o : b; }", [4][]string{{}, none, none, none}},
		{"function (n, o) { return o; }", [4][]string{{}, none, none, none}},
		{"function (n, o) { f(o); }", [4][]string{{}, none, none, none}},
		{"function (n, o) { if (x.if (o)) {} }", [4][]string{{}, none, none, none}},
		{"function named(a,b) {\n  a . x = 1;\n  return a.\n y.z(b.w[0]);\n}", [4][]string{{"x", "y"}, {"w"}, none, none}},
		// The object itself, a computed member, optional chaining, a
		// comment or an escape where a name should be: all of it is sent.
		{"function (d) { log(d); }", [4][]string{none}},
		{"function (d) { return d[k]; }", [4][]string{none}},
		{"function (d) { return d?.x; }", [4][]string{none}},
		{"function (d) { return d./* c */x; }", [4][]string{none}},
		{"function (d) { return \\u0064.x + d.y; }", [4][]string{none}},
		{"function (d) { return d.x + d.\\u0079; }", [4][]string{none}},
		{"function (d) { var d = 1; }", [4][]string{none}},
		{"function (d) { throw {forbidden: 'd is wrong'}; }", [4][]string{none}},
		// Names on Object.prototype reach functions that see the object.
		{"function (d) { if (d.hasOwnProperty('x')) throw 1; }", [4][]string{none}},
		{"function (d) { return d.__proto__; }", [4][]string{none}},
		// arguments, eval, duplicate names, other forms.
		{"function (d) { return arguments[0].x; }", [4][]string{}},
		{"function (d) { eval('d'); return d.x; }", [4][]string{}},
		{"function (d, d) { return d.x; }", [4][]string{}},
		{"(d) => d.x", [4][]string{}},
		{"function (d = {}) { return d.x; }", [4][]string{}},
		{"function ({x}) { return x; }", [4][]string{}},
		{"function* (d) { yield d.x; }", [4][]string{}},
		{"function /* c */ (d) { return d.x; }", [4][]string{}},
		// Longer names containing the parameter's are other variables.
		{"function (d) { return dd.x + d_1 + éd + d.y; }", [4][]string{{"y"}}},
	} {
		if got := membersRead(c.fn); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", c.fn, got, c.want)
		}
	}
}

func TestAppendMembers(t *testing.T) {
	for _, c := range []struct {
		doc   string
		names []string
		want  string
	}{
		{`{"_id":"a","type":"t","n":[1,{"type":"inner"}],"s":"x\"}y"}`, []string{"type", "s"}, `{"type":"t","s":"x\"}y"}`},
		{` { "a" : 1 , "b" : {"c":[]} , "c": true } `, []string{"b", "c"}, `{"b":{"c":[]},"c":true}`},
		{`{"t\u0079pe":1,"type":2}`, []string{"type"}, `{"t\u0079pe":1,"type":2}`},
		{`{"a":1}`, []string{"b"}, `{}`},
		{`{}`, []string{"b"}, `{}`},
	} {
		got, ok := appendMembers([]byte("prefix"), []byte(c.doc), c.names)
		if !ok || string(got) != "prefix"+c.want {
			t.Errorf("%s %q: %s %v, want %s", c.doc, c.names, got, ok, c.want)
		}
	}
	for _, notObject := range []string{``, ` `, `[1]`, `"s"`, `1`, `null`} {
		if got, ok := appendMembers([]byte("prefix"), []byte(notObject), []string{"a"}); ok || string(got) != "prefix" {
			t.Errorf("%q: %q %v, want refused and nothing appended", notObject, got, ok)
		}
	}
}

// FuzzAppendMembers checks the cut of any JSON object against
// encoding/json: the members named, with the values they have, and
// nothing else; other JSON is refused, and other bytes do not panic.
func FuzzAppendMembers(f *testing.F) {
	f.Add([]byte(`{"_id":"a","type":"t","n":[1,{"type":"x"}]}`), "type,n")
	f.Add([]byte(`{"a":"\"}","b":{"a":[]},"a":2}`), "a")
	f.Add([]byte(`{"é":1,"\u00e9":2}`), "é")
	f.Fuzz(func(t *testing.T, doc []byte, list string) {
		names := strings.Split(list, ",")
		got, ok := appendMembers(nil, doc, names) // any bytes: no panic
		if !json.Valid(doc) {
			return // appendMembers is given JSON Settee made
		}
		var full map[string]any
		if json.Unmarshal(doc, &full) != nil || full == nil {
			if ok {
				t.Fatalf("%q: cut %q from JSON that is not an object", doc, got)
			}
			return
		}
		if !ok {
			t.Fatalf("%q: refused a JSON object", doc)
		}
		var cut map[string]any
		if err := json.Unmarshal(got, &cut); err != nil {
			t.Fatalf("%q -> %q: %v", doc, got, err)
		}
		want := map[string]any{}
		for k, v := range full {
			if slices.Contains(names, k) {
				want[k] = v
			}
		}
		if !reflect.DeepEqual(cut, want) {
			t.Fatalf("%q %q -> %q: %v, want %v", doc, names, got, cut, want)
		}
	})
}

// projectionCases are validators that must answer the same whether they
// get the whole documents or only the members they name: among them
// functions that look at the object through Object.prototype, set up by
// themselves or by a function run before them in the same engine.
var projectionCases = []string{
	"function (newDoc, oldDoc, userCtx, secObj) { if (!newDoc._deleted && typeof newDoc.type !== 'string') throw({forbidden: 'type'}); }",
	"function (newDoc, oldDoc, userCtx) { if (oldDoc && oldDoc.owner !== userCtx.name) throw({unauthorized: 'not yours: ' + newDoc.owner}); }",
	"function (d) { d.added = 1; if (d.added !== 1) throw({forbidden: 'assign'}); delete d.type; if (d.type !== undefined) throw({forbidden: 'delete'}); }",
	"function (d) { log(d.type); if (d.address.city.length > 3) throw({forbidden: d.address.city}); }",
	"function (d) { Object.defineProperty(Object.prototype, 'peek', {configurable: true, get: function () { return Object.keys(this).join(); }}); var s = d.peek; delete Object.prototype.peek; throw({forbidden: String(s)}); }",
	"function (d) { Object.prototype.keysOf = function () { return Object.keys(this).length; }; try { throw({forbidden: 'n=' + d.keysOf()}); } finally { delete Object.prototype.keysOf; } }",
	"function (d) { Object.defineProperty(Object.prototype, 'stash', {configurable: true, set: function (v) { globalThis.__seen = JSON.stringify(this); }}); d.stash = 1; delete Object.prototype.stash; throw({forbidden: globalThis.__seen}); }",
	"function (d) { Object.defineProperty(Object.prototype, 'kind', {configurable: true, get: function () { return Object.keys(this).length; }}); }",
	"function (d) { try { var k = d.kind; } catch (e) { throw({forbidden: 'caught ' + String(e)}); } throw({forbidden: 'kind ' + k}); }",
	"function (d) { throw({forbidden: JSON.stringify(d)}); }",
	"function (d, o, u, s) { if (u.roles.indexOf('_admin') < 0 && s.members.names.length) throw({unauthorized: u.name}); }",
	"function (n, o) { if (!o) { return; } if (o && o.n !== n.n) throw({forbidden: 'n changed'}); if (typeof o !== 'object' || o === null || o == undefined) throw({forbidden: 'odd'}); }",
	"function (n, o) { Object.defineProperty(Object.prototype, 'who', {configurable: true, get: function () { return JSON.stringify(this); }}); var w = o && o.who; delete Object.prototype.who; if (w) throw({forbidden: w}); }",
}

var projectionDocs = []string{datasetDoc, smallDoc, `{"_id":"x","type":7,"owner":"bob","_deleted":true}`, `{"_id":"y","kind":"k","peek":1}`}

// TestProjectionUnseen runs every case on every document in one engine
// that cuts the arguments and one that never does, in the same order: the
// answers and the log lines must be the same.
func TestProjectionUnseen(t *testing.T) {
	var logs [2][]string
	rts, start := enginePair(t, func(i int) *Options {
		return &Options{Log: func(l string) { logs[i] = append(logs[i], l) }}
	})
	fresh := 0
	user := json.RawMessage(`{"db":"db","name":"bob","roles":["member"]}`)
	sec := json.RawMessage(`{"members":{"names":["bob"]},"admins":{}}`)
	cut := 0
	for _, src := range projectionCases {
		ddoc := json.RawMessage(`{"_id":"_design/v","validate_doc_update":` + mustQuote(src) + `}`)
		for _, doc := range projectionDocs {
			for _, old := range []string{"", smallDoc} {
				var errs [2]string
				for i, r := range rts {
					err := r.Validate(src, ddoc, json.RawMessage(doc), json.RawMessage(old), user, sec)
					errs[i] = fmt.Sprint(err)
				}
				if errs[0] != errs[1] || !reflect.DeepEqual(logs[0], logs[1]) {
					t.Fatalf("%s on %.40s: %s (logs %q), want %s (logs %q)", src, doc, errs[0], logs[0], errs[1], logs[1])
				}
				if rts[0].restarts > 0 {
					fresh++
					start()
				}
			}
		}
		if membersRead(src)[0] != nil {
			cut++
		}
	}
	if fresh == 0 {
		t.Error("no call was made again in a fresh engine")
	}
	if cut < len(projectionCases)-2 {
		t.Errorf("%d of %d cases had newDoc cut, want all but the two that use it whole", cut, len(projectionCases))
	}
}

// FuzzProjectionUnseen is TestProjectionUnseen, TestMapProjectionUnseen
// and TestFilterProjectionUnseen on mutated function texts.
func FuzzProjectionUnseen(f *testing.F) {
	for _, src := range projectionCases {
		f.Add(src, datasetDoc)
	}
	for _, set := range mapProjectionSets {
		f.Add(set[len(set)-1], datasetDoc)
	}
	for _, src := range filterProjectionCases {
		f.Add(src, datasetDoc)
	}
	f.Add("function (d) { if (d.a + d.b > d.c) throw({forbidden: d.a}); }", `{"a":1,"b":"2","c":null}`)
	// Both engines live across inputs, as in a pool, and start again
	// together when one of them was dropped.
	var rts [2]*Runtime
	defer func() { rts[0].Close(); rts[1].Close() }()
	f.Fuzz(func(t *testing.T, src, doc string) {
		if !json.Valid([]byte(doc)) || !strings.HasPrefix(strings.TrimSpace(doc), "{") {
			return
		}
		if rts[0] == nil || !rts[0].Usable() || !rts[1].Usable() || rts[0].restarts > 0 {
			for i := range rts {
				rts[i].Close()
				r, err := New(&Options{Timeout: 100 * time.Millisecond, Memory: 8 << 20})
				if err != nil {
					t.Fatal(err)
				}
				rts[i] = r
			}
			rts[1].whole = true
		}
		var errs [2]error
		for i, r := range rts {
			errs[i] = r.Validate(src, nil, json.RawMessage(doc), nil, nil, nil)
		}
		for _, err := range errs {
			if errors.Is(err, ErrTimeout) || errors.Is(err, ErrMemory) {
				return
			}
		}
		if fmt.Sprint(errs[0]) != fmt.Sprint(errs[1]) {
			t.Fatalf("%s on %s: %v, want %v", src, doc, errs[0], errs[1])
		}
		// The same text as a map function.
		var rows [2]string
		for i, r := range rts {
			if !r.Usable() {
				return
			}
			var out [][]Emit
			err := r.SetMaps([]string{src}, nil)
			if err == nil {
				out, err = r.Map([]byte(doc))
			}
			if errors.Is(err, ErrTimeout) || errors.Is(err, ErrMemory) {
				return
			}
			b, _ := json.Marshal(out)
			rows[i] = fmt.Sprint(string(b), err)
		}
		if rows[0] != rows[1] {
			t.Fatalf("map %s on %s: %s, want %s", src, doc, rows[0], rows[1])
		}
		// And as a filter.
		var passes [2]string
		req := json.RawMessage(`{"query":{"a":"1"},"userCtx":{"name":"bob","roles":[]}}`)
		for i, r := range rts {
			if !r.Usable() {
				return
			}
			out, err := r.Filter(src, nil, json.RawMessage("["+doc+"]"), req)
			if errors.Is(err, ErrTimeout) || errors.Is(err, ErrMemory) {
				return
			}
			passes[i] = fmt.Sprint(out, err)
		}
		if passes[0] != passes[1] {
			t.Fatalf("filter %s on %s: %s, want %s", src, doc, passes[0], passes[1])
		}
	})
}

// mapProjectionSets are sets of map functions (one design document's)
// whose rows must be the same whether they get the whole document or only
// the members they name: assignments to a frozen document, present
// members or absent, and functions that look at it through
// Object.prototype.
var mapProjectionSets = [][]string{
	{"function (doc) { if (doc.type) { emit([doc.type, doc.age], doc.score); } }"},
	{"function (doc) { doc.x = 1; doc.type = 'changed'; emit(doc._id, [doc.x === undefined ? null : doc.x, doc.type]); }"},
	{"function (doc) { delete doc.type; doc.address.city = 'x'; emit(doc.type, doc.address); }"},
	{"function (doc) { (doc.tags || []).forEach(function (t) { emit(t, doc.n); }); }", "function (doc) { emit(doc.address.city.length, doc.missing.x); }"},
	{"function (doc) { Object.defineProperty(Object.prototype, 'peek', {configurable: true, get: function () { return Object.keys(this).join(); }}); var s = doc.peek; delete Object.prototype.peek; emit(s, null); }"},
	{"function (doc) { Object.defineProperty(Object.prototype, 'stash', {configurable: true, set: function (v) { globalThis.__seen = JSON.stringify(this); }}); doc.stash = 1; delete Object.prototype.stash; emit(globalThis.__seen || null, null); }"},
	{"function (doc) { Object.defineProperty(Object.prototype, 'kind', {configurable: true, get: function () { return Object.keys(this).length; }}); }", "function (doc) { emit(doc.kind, null); }"},
	{"function (doc) { 'use strict'; try { doc.x = 1; } catch (e) { emit(String(e), null); } }"},
	{"function (doc) { emit(doc._id, doc); }"},
}

// TestMapProjectionUnseen runs every set on every document in an engine
// that cuts the document and one that never does, in the same order: the
// rows and the log lines must be the same.
func TestMapProjectionUnseen(t *testing.T) {
	var logs [2][]string
	rts, start := enginePair(t, func(i int) *Options {
		return &Options{Log: func(l string) { logs[i] = append(logs[i], l) }}
	})
	cut, fresh := 0, 0
	for _, set := range mapProjectionSets {
		for _, doc := range projectionDocs {
			var rows [2]string
			for i, r := range rts {
				if err := r.SetMaps(set, nil); err != nil {
					t.Fatal(err)
				}
				out, err := r.Map([]byte(doc))
				b, _ := json.Marshal(out)
				rows[i] = fmt.Sprint(string(b), err)
			}
			if rows[0] != rows[1] || !reflect.DeepEqual(logs[0], logs[1]) {
				t.Fatalf("%q on %.40s: %s (logs %q), want %s (logs %q)", set, doc, rows[0], logs[0], rows[1], logs[1])
			}
			if rts[0].restarts > 0 {
				fresh++
				start()
			}
		}
		if mapMembers(set) != nil {
			cut++
		}
	}
	if want := len(mapProjectionSets) - 2; cut != want || fresh == 0 {
		t.Errorf("%d sets cut (want %d: all but the strict one and the one emitting doc), %d restarts (want some)", cut, want, fresh)
	}
}

// filterProjectionCases are filters that must answer the same whether they
// get whole documents and req or only the members they name.
var filterProjectionCases = []string{
	"function (doc, req) { return doc.owner === req.userCtx.name; }",
	"function (doc, req) { return doc.type === req.query.type; }",
	"function (doc, req) { if (doc._deleted) return true; doc.x = 1; return doc.x === 1 && !doc.missing; }",
	"function (doc, req) { Object.defineProperty(Object.prototype, 'peek', {configurable: true, get: function () { return Object.keys(this).length > 3; }}); var p = doc.peek; delete Object.prototype.peek; return !!p; }",
	"function (doc, req) { Object.defineProperty(Object.prototype, 'rq', {configurable: true, get: function () { return 'peer' in this; }}); var p = req.rq; delete Object.prototype.rq; return !!p; }",
	"function (doc) { return JSON.stringify(doc).length > 100; }",
	"function (doc) { return doc.address.city.length > 1; }",
}

// TestFilterProjectionUnseen runs every filter on batches of documents in
// an engine that cuts doc and req and one that never does.
func TestFilterProjectionUnseen(t *testing.T) {
	rts, start := enginePair(t, func(int) *Options { return nil })
	req := json.RawMessage(`{"method":"GET","query":{"type":"invoice"},"userCtx":{"db":"db","name":"bob","roles":[]},"peer":"127.0.0.1"}`)
	batches := []string{"[" + datasetDoc + "]", "[" + smallDoc + `,{"_id":"x","owner":"bob","type":"invoice"},{"_id":"y","_deleted":true}]`, `[{"_id":"z","address":{"city":"Oslo"}}]`}
	cut, fresh := 0, 0
	for _, src := range filterProjectionCases {
		for _, docs := range batches {
			var answers [2]string
			for i, r := range rts {
				out, err := r.Filter(src, nil, json.RawMessage(docs), req)
				answers[i] = fmt.Sprint(out, err)
			}
			if answers[0] != answers[1] {
				t.Fatalf("%s on %.60s: %s, want %s", src, docs, answers[0], answers[1])
			}
			if rts[0].restarts > 0 {
				fresh++
				start()
			}
		}
		if m := membersRead(src); m[0] != nil {
			cut++
		}
	}
	if cut != len(filterProjectionCases)-1 || fresh == 0 {
		t.Errorf("%d filters cut (want all but the one using doc whole), %d restarts (want some)", cut, fresh)
	}
}

// enginePair starts an engine that cuts arguments and one that never does
// (rts[1].whole), and again on each call of start: a restart of one leaves
// the two apart. opts gives engine i's options.
func enginePair(t *testing.T, opts func(i int) *Options) (*[2]*Runtime, func()) {
	rts := &[2]*Runtime{{}, {}}
	start := func() {
		for i := range rts {
			rts[i].Close()
			r, err := New(opts(i))
			if err != nil {
				t.Fatal(err)
			}
			rts[i] = r
		}
		rts[1].whole = true
	}
	start()
	t.Cleanup(func() { rts[0].Close(); rts[1].Close() })
	return rts, start
}
