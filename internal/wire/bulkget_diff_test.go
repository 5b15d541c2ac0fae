package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/settee/settee/couchdoc"
)

// readTrace runs a reader and records what it hands to fn and whether it
// failed, for comparing two readers.
func readTrace(read func(io.Reader, DocFunc) error, data []byte) (trace []string, err error) {
	err = read(bytes.NewReader(data), func(d *couchdoc.Doc, e error) error {
		if d != nil {
			trace = append(trace, fmt.Sprintf("doc %q %q %v %s %+v %d", d.ID, d.Rev, d.Deleted, d.Body, d.Revisions, len(d.Attachments)))
			for name, a := range d.Attachments {
				trace = append(trace, fmt.Sprintf("att %q %+v", name, *a))
			}
		} else {
			var re *RevError
			if !errors.As(e, &re) {
				return fmt.Errorf("untyped entry error %v", e)
			}
			trace = append(trace, fmt.Sprintf("err %q %q %s/%d %q", re.ID, re.Rev, re.Err.Name, re.Err.Status, re.Err.Reason))
		}
		return nil
	})
	return trace, err
}

// sameRead fails t when the streaming readers and the json.Decoder ones
// disagree on data: the same documents and entry errors in the same order,
// and an error from both or neither (of the same kind: malformed input, a
// cut-off stream, a size bound, a bad document).
func sameRead(t *testing.T, data []byte) {
	t.Helper()
	for _, r := range []struct {
		name      string
		got, want func(io.Reader, DocFunc) error
	}{
		{"bulk_get", ReadBulkGet, refReadBulkGet},
		{"open_revs", ReadOpenRevsJSON, refReadOpenRevsJSON},
	} {
		gt, gerr := readTrace(r.got, data)
		wt, werr := readTrace(r.want, data)
		if (gerr != nil) != (werr != nil) || !reflect.DeepEqual(gt, wt) && !(len(gt) == 0 && len(wt) == 0) {
			t.Fatalf("%s %q:\n got %v, %v\nwant %v, %v", r.name, data, gt, gerr, wt, werr)
		}
		// One difference is allowed: garbage that the input also cuts short
		// (a bad number or literal at its very end) may read as cut off
		// where the json.Decoder called it malformed. The reverse, a cut-off
		// answer called malformed (so not retried), is not allowed.
		if gk, wk := errKind(gerr), errKind(werr); gerr != nil && gk != wk && !(gk == "eof" && wk == "malformed") {
			t.Fatalf("%s %q: error %v, reference %v", r.name, data, gerr, werr)
		}
	}
}

func errKind(err error) string {
	var me *MalformedError
	var ce *couchdoc.Error
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	case errors.As(err, &me):
		return "malformed"
	case errors.As(err, &ce):
		return ce.Name
	}
	return "other"
}

var bulkGetSeeds = []string{
	`{"results":[]}`, `{"results":[],"x":[1,{"a":"]"}]}`, `{"x":1}`, `{}`, `[]`, ``, `{"results":[{"id":"a","docs":[]}]}`,
	`{"results":[{"id":"a","docs":[{"ok":{"_id":"a","_rev":"1-a","x":"}\"{"}}]}]}`,
	`{"results":[{"docs":[{"ok":{"_id":"a","_rev":"1-a"}}],"id":"a"}]}`,
	`{ "results" : [ { "id" : "a" , "docs" : [ { "ok" : { "_id" : "a" , "_rev" : "1-a" , "y" : [ 1 , 2 ] } } ] } ] }`,
	`{"results":[{"id":"a","docs":[{"ok":{"_id":"a","_rev":"x"}}]}]}`,
	`{"results":[{"id":"a","docs":[{"ok":{"_id":"a","_rev":"1-a"},"missing":"1-b"}]}]}`,
	`{"results":[{"id":"a","docs":[{"OK":{"_id":"a","_rev":"1-a"}}]}]}`,
	`{"results":[{"id":"a","docs":[{"ok":{"_id":"a"},"ok":{"_id":"b"}}]}]}`,
	`{"results":[{"id":"a","docs":[{"ok":null}]}]}`, `{"results":[{"id":"a","docs":[{}]}]}`,
	`{"results":[{"id":"a","docs":[{"ok":{"_id":"a","x":tru}}]}]}`, `{"results":[{"id":"a","docs":[{"ok":{"_id":"a"}} ]}]}`,
	`{"results":[{"id":"a","docs":[{"error":{"id":"a","rev":"1-a","error":"not_found","reason":"missing"}}]}]}`,
	`{"results":[{"id":"a","docs":[{"error":{"rev":"1-a"}},{"missing":"2-b"}]}]}`,
	`{"results":[{"id":1,"docs":[]}]}`, `{"results":[{"id":null,"docs":[{"missing":"1-a"}]}]}`,
	`{"results":[{"id":"a","docs":[,]}]}`, `{"results":[{"id":"a","docs":[{"missing":"1-a"},]}]}`,
	`{"results":[{"id":"a","docs":[{"missing":"1-a"}]}],}`, `{"results":[{"id":"a","docs":[{"missing":"1-a"}]}]`,
	`{"results":[{"id":"a","docs":[{"missing":"1-a"}`, `{"results":[{"id":"a","docs":[{"ok":{"_id":"a","_rev":"1-a"`,
	`{"results":[{"id":"a","docs":[{"missing":"1-a"}]}]} trailing`, `{"re\u0073ults":[{"id":"a","docs":[{"missing":"1-a"}]}]}`,
	`{"results":null}`, `{"results":[{"id":"a","docs":[{"missing":"1-a"}]}],"results":[{"id":"b","docs":[{"missing":"1-b"}]}]}`,
	`{"results":[{"id":"a","x":01,"docs":[]}]}`, "{\"results\":[{\"id\":\"a\x01\",\"docs\":[]}]}",
	`{"results":[{"id":"a","docs":[{"ok":{"_id":"a","_rev":"1-a","_attachments":{"f":{"data":"aGk=","digest":"md5-AAAAAAAAAAAAAAAAAAAAAA=="}}}}]}]}`,
	`{"results":[{"id":"a","docs":[{"ok":{"_id":"a","_rev":"1-a","_attachments":{"f":{"data":"aGk=","digest":"md5-DOdSFWFaa5Azl47ApvZx2w=="}}}}]}]}`,
	`[{"ok":{"_id":"a","_rev":"1-a"}},{"missing":"1-b"}]`, `[{"ok":{"_id":"a"}} , {"ok":null}]`, `[{"x":1}]`, `[1]`, `["a"]`,
	`[{"ok":{"_id":"a","_rev":"1-a"}}`, `[{"ok":{"_id":"a","_rev":"1-a"}},]`, `[,{"missing":"1-b"}]`, `[{"missing":"1-b"}]x`,
	`[{"ok":{"_id":"a","_rev":"1-a"},"missing":null}]`, `[{"ok":{"_id":"a","_foo":1}}]`, `[{"ok":[]}]`, `[{"ok":"x"}]`,
}

func TestReadBulkGetMatchesReference(t *testing.T) {
	for _, s := range bulkGetSeeds {
		sameRead(t, []byte(s))
	}
	sameRead(t, bulkGetAnswer(30))
	// Long strings with escapes and quotes on both sides of the reader's
	// 32 KiB chunks.
	for shift := 0; shift < 6; shift++ {
		for _, esc := range []string{`\"`, `\\`, `\\\"`, `\u0041`} {
			head := `[{"ok":{"_id":"a","_rev":"1-a","s":"`
			pad := strings.Repeat("x", 32<<10-len(head)-3+shift)
			s := head + pad + esc + strings.Repeat("y\\n", 5000) + esc + `"}},{"ok":{"_id":"b"}}]`
			sameRead(t, []byte(s))
		}
	}
}

// TestReadBulkGetMatchesReferenceRandom compares random mutations of the
// seeds (a deterministic stand-in for the fuzzer in CI).
func TestReadBulkGetMatchesReferenceRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	special := []byte(`{}[]",:\ _0ak`)
	for i := 0; i < 5000; i++ {
		data := []byte(bulkGetSeeds[rng.Intn(len(bulkGetSeeds))])
		for k := rng.Intn(3); k >= 0 && len(data) > 0; k-- {
			j := rng.Intn(len(data))
			switch rng.Intn(3) {
			case 0:
				data[j] = special[rng.Intn(len(special))]
			case 1:
				data = append(data[:j:j], data[j+1:]...)
			default:
				data = append(data[:j:j], append([]byte{special[rng.Intn(len(special))]}, data[j:]...)...)
			}
		}
		sameRead(t, data)
	}
}

func FuzzReadBulkGetDifferential(f *testing.F) {
	for _, s := range bulkGetSeeds {
		f.Add([]byte(s))
	}
	f.Add(bulkGetAnswer(3))
	f.Fuzz(func(t *testing.T, data []byte) {
		if strings.Count(string(data), "[")+strings.Count(string(data), "{") > 5000 {
			return
		}
		sameRead(t, data)
	})
}
