package jsfunc

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/settee/settee/couchdoc"
)

func newRuntime(t testing.TB, opts *Options) *Runtime {
	t.Helper()
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestMapFunctionForms(t *testing.T) {
	var logged []string
	r := newRuntime(t, &Options{Log: func(l string) { logged = append(logged, l) }})
	lib := json.RawMessage(`{"util": "exports.up = function (s) { return s.toUpperCase(); }; exports.twice = require('./twice').twice;",
		"twice": "exports.twice = function (n) { return 2 * n; };"}`)
	forms := []struct{ src, want string }{
		{"function(doc){ emit(doc._id, null); }", `[["a",null]]`},
		{"function named(doc) { emit(isArray(doc.tags), sum(doc.tags)); log('seen ' + doc._id); }", `[[true,6]]`},
		{"  function (doc) { var u = require('views/lib/util'); emit(u.up(doc._id), u.twice(2)); };  ", `[["A",4]]`},
		{"(function (doc) { emit([doc._id, 1], toJSON({a: 1})) })", `[[["a",1],"{\"a\":1}"]]`},
		{"function (doc) { emit(); emit(doc.missing, doc.tags); }", `[[null,null],[null,[1,2,3]]]`},
		{"// a comment\nfunction (doc) { if (doc.no) emit(1, 1); }", `[]`},
	}
	for _, f := range forms {
		if err := r.SetMaps([]string{f.src}, lib); err != nil {
			t.Fatalf("%q: %v", f.src, err)
		}
		rows, err := r.Map([]byte(`{"_id":"a","tags":[1,2,3]}`))
		if err != nil {
			t.Fatalf("%q: %v", f.src, err)
		}
		var got []any
		for _, e := range rows[0] {
			got = append(got, []json.RawMessage{e.Key, e.Value})
		}
		b, _ := json.Marshal(got)
		if got == nil {
			b = []byte("[]")
		}
		if string(b) != f.want {
			t.Errorf("%q emitted %s, want %s", f.src, b, f.want)
		}
	}
	if len(logged) != 1 || logged[0] != "seen a" {
		t.Errorf("logged %q, want [seen a]", logged)
	}
}

func TestMapErrors(t *testing.T) {
	r := newRuntime(t, nil)
	for _, src := range []string{"function (doc) {", "42", "function (doc) { require('views/lib/none') }", "function (doc) { emit(1, 2) }; x +"} {
		err := r.SetMaps([]string{src}, nil)
		if src == "function (doc) { require('views/lib/none') }" {
			// require runs when the function does: the document is skipped.
			if err != nil {
				t.Fatal(err)
			}
			rows, err := r.Map([]byte(`{"_id":"x"}`))
			if err != nil || len(rows) != 1 || len(rows[0]) != 0 {
				t.Errorf("bad require: rows %v, err %v; want no rows", rows, err)
			}
			continue
		}
		if !errors.Is(err, ErrCompilation) || couchdoc.StatusOf(err) != http.StatusInternalServerError {
			t.Errorf("SetMaps(%q) = %v, want a compilation_error", src, err)
		}
	}
	// A function that throws emits nothing for that document; the others still run.
	if err := r.SetMaps([]string{"function (doc) { emit(doc.a.b, 1) }", "function (doc) { emit(doc._id, 2) }"}, nil); err != nil {
		t.Fatal(err)
	}
	rows, err := r.Map([]byte(`{"_id":"x"}`))
	if err != nil || len(rows) != 2 || len(rows[0]) != 0 || len(rows[1]) != 1 {
		t.Fatalf("rows %v, err %v", rows, err)
	}
}

func TestReduce(t *testing.T) {
	r := newRuntime(t, nil)
	src := "function (keys, values, rereduce) { return rereduce ? sum(values) + 1000 : values.length; }"
	got, err := r.Reduce(src, nil, json.RawMessage(`[[1,"a"],[2,"b"]]`), json.RawMessage(`[5,6]`), false)
	if err != nil || string(got) != "2" {
		t.Fatalf("reduce = %s, %v; want 2", got, err)
	}
	got, err = r.Reduce(src, nil, nil, json.RawMessage(`[2,3]`), true)
	if err != nil || string(got) != "1005" {
		t.Fatalf("rereduce = %s, %v; want 1005", got, err)
	}
	_, err = r.Reduce("function () { throw new TypeError('nope') }", nil, nil, json.RawMessage(`[]`), true)
	var ce *couchdoc.Error
	if !errors.As(err, &ce) || ce.Name != "TypeError" || ce.Reason != "nope" || ce.Status != 500 {
		t.Fatalf("throwing reduce: %v", err)
	}
}

func TestValidate(t *testing.T) {
	r := newRuntime(t, nil)
	ddoc := json.RawMessage(`{"_id":"_design/v","lib":{"rules":"exports.need = 'title';"}}`)
	src := `function (newDoc, oldDoc, userCtx, secObj) {
		var need = require('lib/rules').need;
		if (newDoc._deleted) return;
		if (userCtx.name === null) throw({unauthorized: 'log in'});
		if (!newDoc[need]) throw({forbidden: 'missing ' + need + ' in ' + this._id});
		if (oldDoc && secObj.admins.names.indexOf(userCtx.name) < 0) throw({forbidden: 'only admins edit'});
	}`
	user := json.RawMessage(`{"db":"d","name":"bob","roles":[]}`)
	sec := json.RawMessage(`{"admins":{"names":["ann"],"roles":[]},"members":{"names":[],"roles":[]}}`)
	cases := []struct {
		newDoc, oldDoc, user string
		want                 *couchdoc.Error
		reason               string
	}{
		{`{"_id":"a","title":"t"}`, ``, string(user), nil, ""},
		{`{"_id":"a"}`, ``, string(user), couchdoc.ErrForbidden, "missing title in _design/v"},
		{`{"_id":"a","title":"t"}`, ``, `{"db":"d","name":null,"roles":[]}`, couchdoc.ErrUnauthorized, "log in"},
		{`{"_id":"a","title":"t"}`, `{"_id":"a"}`, string(user), couchdoc.ErrForbidden, "only admins edit"},
		{`{"_id":"a","_deleted":true}`, `{"_id":"a"}`, string(user), nil, ""},
	}
	for _, c := range cases {
		err := r.Validate(src, ddoc, json.RawMessage(c.newDoc), json.RawMessage(c.oldDoc), json.RawMessage(c.user), sec)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v, want accepted", c.newDoc, err)
			}
			continue
		}
		var ce *couchdoc.Error
		if !errors.Is(err, c.want) || !errors.As(err, &ce) || ce.Reason != c.reason || ce.Status != c.want.Status {
			t.Errorf("%s by %s: %v, want %s %q", c.newDoc, c.user, err, c.want.Name, c.reason)
		}
	}
}

// TestValidateArguments checks that a function that can see more
// arguments than it declares (arguments, rest, defaults, destructuring,
// eval, an arrow) gets all four, and that validators stay apart per design
// document.
func TestValidateArguments(t *testing.T) {
	r := newRuntime(t, nil)
	const all = `if (arguments.length !== 4 || arguments[3].admins === undefined || arguments[2].name !== "bob") throw({forbidden: "saw " + JSON.stringify([].slice.call(arguments))});`
	for _, src := range []string{
		`function (newDoc) { ` + all + ` }`,
		`function (newDoc, ...rest) { if (rest.length !== 3 || rest[2].admins === undefined) throw({forbidden: "rest " + rest.length}); }`,
		`function (newDoc, oldDoc = null, userCtx, secObj) { if (!secObj || secObj.admins === undefined) throw({forbidden: "default"}); }`,
		`function ({_id}, oldDoc, userCtx, secObj) { if (!secObj || secObj.admins === undefined) throw({forbidden: "destructured"}); }`,
		`function (newDoc) { eval('` + strings.ReplaceAll(all, `"`, `\"`) + `'); }`,
		`(newDoc, oldDoc, userCtx, secObj) => { if (!secObj || secObj.admins === undefined) throw({forbidden: "arrow"}); }`,
		`function (newDoc, oldDoc, userCtx, secObj) { if (!secObj || secObj.admins === undefined) throw({forbidden: "plain"}); }`,
		`function (newDoc, oldDoc, userCtx) { if (userCtx.name !== "bob") throw({forbidden: "three"}); }`,
	} {
		err := r.Validate(src, json.RawMessage(`{"_id":"_design/v"}`), json.RawMessage(`{"_id":"a"}`), nil,
			json.RawMessage(`{"db":"d","name":"bob","roles":[]}`), json.RawMessage(`{"admins":{"names":[],"roles":[]},"members":{"names":[],"roles":[]}}`))
		if err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
	// One function, two design documents: each call's this is its own.
	src := `function (newDoc) { if (newDoc.want !== this.name) throw({forbidden: this.name}); }`
	for _, name := range []string{"one", "two", "one"} {
		ddoc := json.RawMessage(`{"_id":"_design/` + name + `","name":"` + name + `"}`)
		if err := r.Validate(src, ddoc, json.RawMessage(`{"_id":"a","want":"`+name+`"}`), nil, nil, nil); err != nil {
			t.Errorf("ddoc %s: %v", name, err)
		}
		if err := r.Validate(src, ddoc, json.RawMessage(`{"_id":"a","want":"other"}`), nil, nil, nil); !errors.Is(err, couchdoc.ErrForbidden) {
			t.Errorf("ddoc %s: %v, want forbidden", name, err)
		}
	}
}

// TestAppendASCII checks the escaped arguments read as the same values,
// in Go and in the engine (a character above U+FFFF is one surrogate pair
// there, as in CouchDB's engine).
func TestAppendASCII(t *testing.T) {
	for _, doc := range []string{
		`{"a":"plain","n":1.5,"l":[true,null]}`,
		`{"東京":"Zürich smörgås","e":"😀 \u00e9\n","x":"\"q\""}`,
		"{\"bad\":\"\xff\xfe\"}",
	} {
		got := appendASCII(nil, []byte(doc))
		for _, c := range got {
			if c >= 0x80 {
				t.Fatalf("%q: non-ASCII byte in %q", doc, got)
			}
		}
		var a, b any
		if err := json.Unmarshal([]byte(doc), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &b); err != nil {
			t.Fatalf("%q -> %q: %v", doc, got, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%q -> %q: %v, want %v", doc, got, b, a)
		}
	}
	r := newRuntime(t, nil)
	src := `function (newDoc) { if (newDoc.s !== "\ud83d\ude00 é東" || newDoc.s.length !== 5) throw({forbidden: newDoc.s + " " + newDoc.s.length}); }`
	if err := r.Validate(src, nil, json.RawMessage(`{"s":"😀 é東"}`), nil, nil, nil); err != nil {
		t.Fatal(err)
	}
}

// TestValidatorsBounded registers more validators than a runtime keeps
// and checks each still answers.
func TestValidatorsBounded(t *testing.T) {
	r := newRuntime(t, nil)
	for i := range maxValidators + 10 {
		src := fmt.Sprintf(`function (newDoc) { if (newDoc.n !== %d) throw({forbidden: "not %d"}); }`, i, i)
		if err := r.Validate(src, nil, json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), nil, nil, nil); err != nil {
			t.Fatalf("validator %d: %v", i, err)
		}
		if err := r.Validate(src, nil, json.RawMessage(`{"n":-1}`), nil, nil, nil); !errors.Is(err, couchdoc.ErrForbidden) {
			t.Fatalf("validator %d: %v, want forbidden", i, err)
		}
	}
	if r.nValidators > maxValidators {
		t.Fatalf("%d validators registered, at most %d", r.nValidators, maxValidators)
	}
}

func TestFilter(t *testing.T) {
	r := newRuntime(t, nil)
	src := "function (doc, req) { return doc.type === req.query.type }"
	got, err := r.Filter(src, json.RawMessage(`{"_id":"_design/f"}`), json.RawMessage(`[{"type":"a"},{"type":"b"},{}]`), json.RawMessage(`{"query":{"type":"a"}}`))
	if err != nil || len(got) != 3 || !got[0] || got[1] || got[2] {
		t.Fatalf("filter = %v, %v; want [true false false]", got, err)
	}
}

// TestRunaways: a loop without end and an allocation without end are
// stopped; the runtime is closed and the pool gives a working one.
func TestRunaways(t *testing.T) {
	for _, c := range []struct {
		src  string
		opts Options
		want error
	}{
		{"function (doc) { while (true) {} }", Options{Timeout: 300 * time.Millisecond}, ErrTimeout},
		// A time limit the allocation cannot reach first, even under -race.
		{"function (doc) { var a = []; for (;;) a.push('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' + a.length); }", Options{Timeout: time.Minute, Memory: 16 << 20}, ErrMemory},
	} {
		pool := NewPool(&c.opts, 2)
		defer pool.Close()
		r, err := pool.Get()
		if err != nil {
			t.Fatal(err)
		}
		if err := r.SetMaps([]string{c.src}, nil); err != nil {
			t.Fatal(err)
		}
		_, err = r.Map([]byte(`{"_id":"x"}`))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.src, err, c.want)
		}
		if r.Usable() {
			t.Errorf("%s: runtime still usable after %v", c.src, err)
		}
		pool.Put(r)
		r2, err := pool.Get()
		if err != nil {
			t.Fatal(err)
		}
		if r2 == r {
			t.Fatal("pool gave back a broken runtime")
		}
		if err := r2.SetMaps([]string{"function (doc) { emit(1, 2) }"}, nil); err != nil {
			t.Fatal(err)
		}
		if rows, err := r2.Map([]byte(`{}`)); err != nil || len(rows[0]) != 1 {
			t.Fatalf("fresh runtime: %v %v", rows, err)
		}
		pool.Put(r2)
	}
}

// TestNoHostAccess: the sandbox offers nothing that reaches files, the
// network or the process.
func TestNoHostAccess(t *testing.T) {
	r := newRuntime(t, nil)
	src := `function (doc) {
		emit("globals", [typeof std, typeof os, typeof process, typeof fetch, typeof XMLHttpRequest, typeof print, typeof setTimeout].join(","));
		try { emit("fs", typeof require("fs")); } catch (e) { emit("fs", "refused"); }
	}`
	if err := r.SetMaps([]string{src}, nil); err != nil {
		t.Fatal(err)
	}
	rows, err := r.Map([]byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rows[0] {
		v := string(e.Value)
		if strings.Contains(v, "object") || strings.Contains(v, "function") {
			t.Errorf("%s reachable: %s", e.Key, v)
		}
	}
}

func FuzzRuntime(f *testing.F) {
	f.Add("function (doc) { emit(doc._id, doc) }", `{"_id":"a"}`)
	f.Add("function (doc) { while (doc) {} }", `{}`)
	f.Add("function (doc) { throw {forbidden: doc} }", `[1]`)
	f.Add("})(); globalThis.x = (function(){", `null`)
	r, err := New(&Options{Timeout: 100 * time.Millisecond, Memory: 8 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src, doc string) {
		if r == nil || !r.Usable() {
			r, err = New(&Options{Timeout: 100 * time.Millisecond, Memory: 8 << 20})
			if err != nil {
				r = nil
				t.Fatal(err)
			}
		}
		start := time.Now()
		if err := r.SetMaps([]string{src}, nil); err == nil {
			_, _ = r.Map([]byte(doc))
		}
		_, _ = r.Reduce(src, nil, nil, json.RawMessage(`[1,2]`), true)
		_ = r.Validate(src, nil, json.RawMessage(doc), nil, nil, nil)
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("calls took %v past their time limit", d)
		}
	})
}
