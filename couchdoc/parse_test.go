package couchdoc

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// parseSeeds are documents that take every branch of ParseDoc: fast paths,
// their fallbacks, and invalid JSON.
var parseSeeds = []string{
	`{}`, ` { } `, `[]`, `"x"`, `1`, `null`, ``, ` `, `{`, `{}{}`, `{} x`, `{"a":}`, `{"a":1,}`,
	`{"_id":"a","_rev":"1-abc","x":1}`,
	`{"_id":"a","_rev":"2-b","_revisions":{"start":2,"ids":["b","a"]},"_deleted":true}`,
	`{"_id":"a","_rev":"2-b","_revisions":{"start":2,"ids":["b","x"]}}`,
	`{"_id":"a","_rev":"3-c","_revisions":{"start":3,"ids":["c","b"]}}`,
	`{"_revisions":null}`, `{"_revisions":{}}`, `{"_revisions":{"ids":[]}}`, `{"_revisions":{"ids":null}}`,
	`{"_revisions":{"Start":2,"IDS":["b","a"]}}`, `{"_revisions":{"start":2.0,"ids":["b"]}}`,
	`{"_revisions":{"start":1e1,"ids":["b"]}}`, `{"_revisions":{"start":99999999999999999999,"ids":[]}}`,
	`{"_revisions":{"start":1,"ids":["a\u0062",null,"c"]}}`, `{"_revisions":{"start":1,"ids":[1]}}`,
	`{"_revisions":{"start":1,"ids":["a"],"ids":["b","c"],"x":1}}`, `{"_revisions":[1]}`, `{"_revisions":"x"}`,
	`{ "_revisions" : { "start" : 2 , "ids" : [ "b" , "a" ] } , "_rev" : "2-b" }`,
	`{"_id":"a","_attachments":{"f":{"content_type":"text/plain","data":"aGk="}}}`,
	`{"_id":"a","_attachments":{"f":{"stub":true,"digest":"md5-x","length":3,"revpos":1}}}`,
	`{"_attachments":{"f":{"follows":true,"length":3}}}`, `{"_attachments":{"f":{}}}`, `{"_attachments":{"":{"stub":true}}}`,
	`{"_attachments":{"f":{"data":"aGk\/"}}}`, `{"_attachments":{"f":{"data":"a\u0047k="}}}`, `{"_attachments":{"f":{"data":"!!"}}}`,
	`{"_attachments":{"f":{"data":""}}}`, `{"_attachments":{"f":{"data":null,"stub":true}}}`, `{"_attachments":{"f":{"data":1}}}`,
	`{"_attachments":{"f":{"Content_Type":"a","data":"aGk="}}}`, `{"_attachments":{"f":{"ſtub":true}}}`,
	`{"_attachments":{"f":{"stub":true,"length":null}}}`, `{"_attachments":{"f":{"stub":true,"length":1.5}}}`,
	`{"_attachments":{"f":{"stub":"yes"}}}`, `{"_attachments":{"f":{"stub":true,"encoding":"gzip","x":[1,{"y":2}]}}}`,
	`{"_attachments":{"f":{"stub":1},"f":{"stub":true}}}`, `{"_attachments":{"f":{"stub":true},"f":{"stub":1}}}`,
	`{"_attachments":{"f\u00e9":{"stub":true},"g":{"data":"aGk=","content_type":"x/y","digest":"md5-abc"}}}`,
	`{"_attachments":null}`, `{"_attachments":[]}`, `{"_attachments":{"f":null}}`, `{"_attachments":{"f":[]}}`,
	` {"_attachments" : { "f" : { "stub" : true , "revpos" : 2 } } } `,
	`{"_foo":1}`, `{"_rev":"x"}`, `{"_id":"_local/x","_rev":"0-3"}`, `{"_rev":"x","_id":"_local/x"}`, `{"_rev":"0-3"}`,
	`{"_id":1}`, `{"_id":null}`, `{"_id":"a","_id":null}`, `{"_rev":null}`, `{"_rev":""}`, `{"_rev":1}`,
	`{"_deleted":1}`, `{"_deleted":null}`, `{"_deleted":true,"_deleted":false}`, `{"_deleted":"true"}`,
	`{"_conflicts":["1-a"],"_revs_info":[],"_local_seq":3,"_deleted_conflicts":1}`,
	`{"_foo":1,"a":}`, `{"a":1,"_foo":1,`, `{"_id":1,"a":}`, `{"_":1}`, `{"\u005fid":"x"}`, `{"\u005ffoo":1}`,
	`{"_i\u0064":"x"}`, `{"_id\u00e9":1}`, `{"\\_id":1}`,
	`{"a":{"b":[1,2,{"c":null}]},"z":"\u00e9"}`,
	"{ \"a\" : [ 1 ,\t2 ] ,\n\"b\" : { \"c\" : \" x y \" } , \"d\" : \"q\\\" }\" }",
	`{"<a>":1,"&":2,"a\u0062":3,"\/":4,"é":5,"x\u2028":6,"":7,"a":1,"a":2}`,
	"{\"x\xe2\x80\xa8\":1,\"\xff\":2,\"_\xff\":3}", "{\"_id\":\"\xff\"}", "{\"_rev\":\"1-\xff\"}",
	`{"_id":"a\"b","_rev":"1-a\\b"}`, `{"_id":"a\\"}`, `{"a":"\\\\","b":"\\"}`,
	`{"n":-0.5e+10,"t":true,"f":false,"z":null,"s":"","arr":[],"obj":{}}`,
	`{"_replication_state":"completed","_replication_id":"x","a":1,"_access":["u"]}`,
	`{"_replication_state_time":1,"_replication_state_reason":null,"_replication_stats":{"docs_read":1}}`,
	`{"\u005freplication_state":"x","_\u0061ccess":[],"_replication_statsX":1}`, `{"_access":1,"_accessX":2}`,
	`{"_replication":1}`, `{"_a":1}`, `{"_r":1}`,
	`{"_id":""}`, `{"_id":"\u0000"}`, `{"a":1,"_id":"","_foo":2}`, `{"_foo":2,"_id":""}`, `{"_id":"","_id":"x"}`,
}

// TestParseEmptyID: "_id": "" is CouchDB's illegal_docid; no _id is fine.
func TestParseEmptyID(t *testing.T) {
	for _, in := range []string{`{"_id":""}`, `{"a":1, "_id" : "" }`, `{"\u005fid":""}`} {
		_, err := ParseDoc([]byte(in))
		if !errors.Is(err, ErrIllegalDocID) || err.Error() != "illegal_docid: Document id must not be empty" {
			t.Errorf("%s: %v", in, err)
		}
	}
	if d, err := ParseDoc([]byte(`{"a":1}`)); err != nil || d.ID != "" {
		t.Errorf("no _id: %v %v", d, err)
	}
}

// TestParseKeepsBodyMembers: the special members CouchDB 3.5 keeps in a
// document's body (couch_doc:transfer_fields) stay in Body, in order;
// other unknown special members are doc_validation errors.
func TestParseKeepsBodyMembers(t *testing.T) {
	doc, err := ParseDoc([]byte(`{"_id":"r","_replication_id":"abc","x":1,"_replication_state":"error","_replication_state_time":"2026-01-01T00:00:00Z","_replication_state_reason":"why","_replication_stats":{"docs_read":1},"_access":["bob"]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_replication_id":"abc","x":1,"_replication_state":"error","_replication_state_time":"2026-01-01T00:00:00Z","_replication_state_reason":"why","_replication_stats":{"docs_read":1},"_access":["bob"]}`
	if string(doc.Body) != want || doc.ID != "r" {
		t.Fatalf("body %s, want %s", doc.Body, want)
	}
	for _, bad := range []string{`{"_replication":1}`, `{"_accessx":1}`, `{"_replication_statsX":1}`} {
		_, err := ParseDoc([]byte(bad))
		var e *Error
		if !errors.As(err, &e) || e.Name != "doc_validation" || !strings.HasPrefix(e.Reason, "Bad special document member: _") {
			t.Errorf("%s: %v, want doc_validation", bad, err)
		}
	}
}

// sameParse fails t when ParseDoc and the reference (parseDocTokens, token
// by token with encoding/json) disagree on data.
func sameParse(t *testing.T, data []byte) {
	t.Helper()
	got, gerr := ParseDoc(data)
	want, werr := parseDocTokens(data)
	if (gerr != nil) != (werr != nil) {
		t.Fatalf("%q: ParseDoc error %v, reference error %v", data, gerr, werr)
	}
	if werr != nil {
		var g, w *Error
		if !errors.As(gerr, &g) || !errors.As(werr, &w) {
			t.Fatalf("%q: untyped errors %v / %v", data, gerr, werr)
		}
		// The reference checks attachments in map order: with two bad ones
		// either reason may come first.
		if g.Name != w.Name || g.Status != w.Status ||
			g.Reason != w.Reason && !strings.Contains(w.Reason, "ttachment") {
			t.Fatalf("%q: ParseDoc error %#v, reference error %#v", data, g, w)
		}
		return
	}
	if !bytes.Equal(got.Body, want.Body) {
		t.Fatalf("%q: body %s, reference %s", data, got.Body, want.Body)
	}
	gb, wb, gp := got.Body, want.Body, got.parsed
	got.Body, want.Body, got.parsed = nil, nil, nil
	defer func() { got.Body, want.Body, got.parsed = gb, wb, gp }()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", data, got, want)
	}
}

func TestParseDocMatchesReference(t *testing.T) {
	for _, s := range parseSeeds {
		sameParse(t, []byte(s))
	}
}

// TestParseDocMatchesReferenceRandom compares random documents and random
// mutations of them (a deterministic stand-in for the fuzzer). Under the
// race detector, which has nothing to find in this one goroutine and
// slows it most, it runs a tenth of them: CI's fuzzing pass runs
// FuzzParseDocDifferential for the volume.
func TestParseDocMatchesReferenceRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	n := 20000
	if testing.Short() || raceDetector {
		n = 2000
	}
	for i := 0; i < n; i++ {
		data := randomDoc(rng)
		sameParse(t, data)
		for k := 0; k < 3; k++ {
			sameParse(t, mutate(rng, data))
		}
	}
}

func FuzzParseDocDifferential(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Add(benchDoc(false))
	f.Add(benchDoc(true))
	f.Fuzz(func(t *testing.T, data []byte) { sameParse(t, data) })
}

// randomDoc returns a document mixing special members (well and badly
// typed), user fields with awkward keys, and random white space.
func randomDoc(rng *rand.Rand) []byte {
	ws := func() string { return []string{"", "", "", " ", "\n\t", "  "}[rng.Intn(6)] }
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	str := func() string {
		return pick(`"a"`, `"1-abc"`, `"2-b"`, `"_local/x"`, `"0-1"`, `"a\"b"`, `"\u00e9"`, `"<&>"`, `""`, `"a\/b"`, "\"\xff\"", `"x y"`)
	}
	var value func(depth int) string
	value = func(depth int) string {
		switch n := rng.Intn(9); {
		case n < 3 || depth > 2:
			return pick(`1`, `-2.5e3`, `true`, `false`, `null`, str())
		case n < 6:
			var parts []string
			for k := rng.Intn(4); k > 0; k-- {
				parts = append(parts, ws()+value(depth+1)+ws())
			}
			return "[" + strings.Join(parts, ",") + "]"
		default:
			var parts []string
			for k := rng.Intn(4); k > 0; k-- {
				parts = append(parts, ws()+str()+ws()+":"+ws()+value(depth+1)+ws())
			}
			return "{" + strings.Join(parts, ",") + "}"
		}
	}
	att := func() string {
		var parts []string
		for k := rng.Intn(5); k > 0; k-- {
			var kv string
			switch rng.Intn(9) {
			case 0:
				kv = `"data":` + pick(`"aGk="`, `""`, `"aGk\/"`, `"!"`, `null`, `1`, `"`+base64.StdEncoding.EncodeToString([]byte("hello world"))+`"`)
			case 1:
				kv = `"stub":` + pick(`true`, `false`, `null`, `1`)
			case 2:
				kv = `"follows":` + pick(`true`, `false`)
			case 3:
				kv = `"length":` + pick(`3`, `-1`, `1.5`, `null`, `"3"`)
			case 4:
				kv = `"revpos":` + pick(`1`, `2e1`, `99999999999999999999`)
			case 5:
				kv = pick(`"content_type"`, `"Content_Type"`, `"digest"`, `"DIGEST"`) + ":" + str()
			case 6:
				kv = pick(`"encoding"`, `"x"`, `"ſtub"`, `"d\u0061ta"`) + ":" + value(2)
			default:
				kv = `"stub":true`
			}
			parts = append(parts, ws()+kv+ws())
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	var members []string
	for k := rng.Intn(8); k > 0; k-- {
		var kv string
		switch rng.Intn(12) {
		case 0:
			kv = `"_id":` + pick(str(), `null`, `1`)
		case 1:
			kv = `"_rev":` + pick(str(), `"3-c"`, `null`, `1`)
		case 2:
			kv = `"_deleted":` + pick(`true`, `false`, `null`, `1`)
		case 3:
			kv = `"_revisions":` + pick(`{"start":3,"ids":["c","b","a"]}`, `{"start":2,"ids":["b","a"]}`, `{"ids":["c"],"start":3}`,
				`{"start":1}`, `null`, `{"Start":3,"ids":["c"]}`, `{"start":3,"ids":["c",1]}`, `[]`, `{"start":3.0,"ids":[]}`, value(1))
		case 4:
			var as []string
			for a := rng.Intn(3); a >= 0; a-- {
				as = append(as, ws()+pick(`"f"`, `"g"`, `""`, `"f\u00e9"`, `"\u0066"`)+ws()+":"+ws()+att())
			}
			kv = `"_attachments":` + pick("{"+strings.Join(as, ",")+"}", `null`, `[]`, `{}`)
		case 5:
			kv = pick(`"_conflicts"`, `"_revs_info"`, `"_local_seq"`, `"_foo"`, `"_"`, `"\u005fid"`) + ":" + value(1)
		default:
			kv = pick(`"a"`, `"b"`, `"<x>"`, `"a\u0062"`, `"é"`, `""`, "\"\xe2\x80\xa9\"", `"\\"`) + ws() + ":" + ws() + value(0)
		}
		members = append(members, ws()+kv+ws())
	}
	return []byte(ws() + "{" + strings.Join(members, ",") + "}" + ws())
}

// mutate flips, drops or inserts one byte.
func mutate(rng *rand.Rand, data []byte) []byte {
	out := append([]byte(nil), data...)
	if len(out) == 0 {
		return out
	}
	i := rng.Intn(len(out))
	special := []byte(`{}[]",:\ _0a`)
	switch rng.Intn(3) {
	case 0:
		out[i] = special[rng.Intn(len(special))]
	case 1:
		out = append(out[:i], out[i+1:]...)
	default:
		out = append(out[:i], append([]byte{special[rng.Intn(len(special))]}, out[i:]...)...)
	}
	return out
}

// benchDoc is a realistic replicated document of about 1 KB (as _bulk_get
// sends it with revs=true), with or without a small inline attachment.
func benchDoc(attachment bool) []byte {
	var b bytes.Buffer
	b.WriteString(`{"_id":"doc-000123","_rev":"3-9f2c1b7e4d5a6f708192a3b4c5d6e7f8",`)
	b.WriteString(`"type":"order","customer":{"name":"Zoë Müller","email":"zoe@example.com","tier":3},"items":[`)
	for i := 0; i < 6; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"sku":"SKU-%05d","qty":%d,"price":%d.%02d,"tags":["a","b%d"],"note":"line \"%d\" ok"}`, i*37, i+1, i*3+1, i*7%100, i, i)
	}
	b.WriteString(`],"total":123.45,"paid":true,"shipped":null,"created":"2026-11-21T20:00:00Z","notes":"`)
	b.WriteString(strings.Repeat("lorem ipsum dolor sit amet ", 8))
	b.WriteString(`"`)
	if attachment {
		data := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("0123456789"), 40))
		b.WriteString(`,"_attachments":{"receipt.txt":{"content_type":"text/plain","revpos":2,"digest":"md5-abcdefghijklmnopqrstuv==","length":400,"data":"` + data + `"}}`)
	}
	b.WriteString(`,"_revisions":{"start":3,"ids":["9f2c1b7e4d5a6f708192a3b4c5d6e7f8","8e1b0a6d3c4f5e6071829304a5b6c7d8","7d0a9f5c2b3e4d5f60718293a4b5c6d7"]}}`)
	return b.Bytes()
}

func benchmarkParse(b *testing.B, parse func([]byte) (*Doc, error), attachment bool) {
	data := benchDoc(attachment)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parse(data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}

func BenchmarkParseDoc(b *testing.B) {
	for _, att := range []bool{false, true} {
		name := "plain"
		if att {
			name = "attachment"
		}
		b.Run(name+"/onepass", func(b *testing.B) { benchmarkParse(b, ParseDoc, att) })
		b.Run(name+"/reference", func(b *testing.B) { benchmarkParse(b, parseDocTokens, att) })
	}
}
