package couchcorpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// volatileKeys differ between runs and servers (the corpus README): their
// presence is compared, their values are not.
var volatileKeys = map[string]bool{
	"instance_start_time": true, "sizes": true, "uuid": true, "git_sha": true,
	"session_id": true, "start_time": true, "end_time": true, "uuids": true,
	// _find's bookmark is as opaque as a sequence (CouchDB's is an encoded
	// Erlang term); execution_stats count what each engine examined.
	"bookmark": true, "execution_stats": true,
	// Sharding is configuration (q differs between databases of one
	// CouchDB): a single-node server answers its own.
	"cluster": true,
}

func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func (c *comparer) jsonBytes(where string, want, have []byte) {
	w, err := decodeJSON(want)
	if err != nil {
		if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(have)) {
			c.addf("%s: not JSON in CouchDB's answer and bytes differ", where)
		}
		return
	}
	h, err := decodeJSON(have)
	if err != nil {
		c.addf("%s: not JSON: %.120q", where, have)
		return
	}
	c.walk(where, "", w, h)
}

// feed compares a continuous or eventsource feed row by row; heartbeats
// (blank lines) and eventsource ids are framing.
func (c *comparer) feed(where string, want, have []byte) {
	w, h := feedRows(want), feedRows(have)
	if len(w) != len(h) {
		c.addf("%s: %d feed rows, CouchDB %d", where, len(h), len(w))
	}
	for i := 0; i < len(w) && i < len(h); i++ {
		c.jsonBytes(fmt.Sprintf("%s row %d", where, i), w[i], h[i])
	}
}

func feedRows(b []byte) [][]byte {
	var rows [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			line = bytes.TrimSpace(rest)
		}
		if len(line) == 0 || line[0] != '{' && line[0] != '[' {
			continue
		}
		rows = append(rows, append([]byte(nil), line...))
	}
	return rows
}

var seqPrefix = regexp.MustCompile(`^(\d+)(-.*)?$`)

// seqNumber is a sequence's numeric prefix: CouchDB's "328-g1AAAA..." and
// an integer 328 are the same position in the same update order.
func seqNumber(v any) (string, bool) {
	switch s := v.(type) {
	case json.Number:
		return s.String(), true
	case string:
		if m := seqPrefix.FindStringSubmatch(s); m != nil {
			return m[1], true
		}
	case nil:
		return "null", true
	}
	return "", false
}

func isSeqKey(k string) bool {
	return k == "seq" || k == "since" || strings.HasSuffix(k, "_seq")
}

func (c *comparer) walk(where, key string, want, have any) {
	if isSeqKey(key) {
		ws, ok1 := seqNumber(want)
		hs, ok2 := seqNumber(have)
		if !ok1 || !ok2 || ws != hs {
			c.addf("%s: %v, CouchDB %v", where, short(have), short(want))
		}
		return
	}
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			c.addf("%s: %v, CouchDB an object", where, short(have))
			return
		}
		if c.opts.IdentityAttachments && key != "" && (w["encoding"] == "gzip" || Compressible(w["content_type"])) {
			w = withoutKeys(w, "encoding", "encoded_length", "digest")
			h = withoutKeys(h, "encoding", "encoded_length", "digest")
		}
		for _, k := range sortedKeys(w) {
			hv, ok := h[k]
			if !ok {
				c.addf("%s: missing %q", where, k)
				continue
			}
			if volatileKeys[k] || (c.badRequest && k == "reason" && where == "body") {
				continue
			}
			c.walk(where+"."+k, k, w[k], hv)
		}
		for _, k := range sortedKeys(h) {
			if _, ok := w[k]; !ok {
				c.addf("%s: extra %q", where, k)
			}
		}
	case []any:
		h, ok := have.([]any)
		if !ok {
			c.addf("%s: %v, CouchDB an array", where, short(have))
			return
		}
		if len(w) != len(h) {
			c.addf("%s: %d items, CouchDB %d", where, len(h), len(w))
		}
		for i := 0; i < len(w) && i < len(h); i++ {
			c.walk(fmt.Sprintf("%s[%d]", where, i), key, w[i], h[i])
		}
	case json.Number:
		h, ok := have.(json.Number)
		wf, err1 := strconv.ParseFloat(w.String(), 64)
		hf, err2 := strconv.ParseFloat(string(h), 64)
		if !ok || err1 != nil || err2 != nil || (wf != hf && !c.close(wf, hf)) {
			c.addf("%s: %v, CouchDB %v", where, short(have), w)
		}
	case string:
		h, ok := have.(string)
		if !ok || c.m.text(w) != h {
			c.addf("%s: %v, CouchDB %v", where, short(have), short(w))
		}
	default:
		if want != have {
			c.addf("%s: %v, CouchDB %v", where, short(have), want)
		}
	}
}

// Compressible reports whether CouchDB 3.5 stores an attachment of this
// content type gzip-encoded by default ([attachments] compressible_types).
func Compressible(contentType any) bool {
	ct, _ := contentType.(string)
	ct, _, _ = strings.Cut(ct, ";")
	ct = strings.TrimSpace(strings.ToLower(ct))
	switch ct {
	case "application/javascript", "application/json", "application/xml":
		return true
	}
	return strings.HasPrefix(ct, "text/")
}

func withoutKeys(m map[string]any, keys ...string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 100 {
		return string(b[:100]) + "..."
	}
	return string(b)
}

// close reports whether two numbers are within the relative tolerance.
func (c *comparer) close(a, b float64) bool {
	t := c.opts.FloatTolerance
	return t > 0 && math.Abs(a-b) <= t*math.Max(math.Abs(a), math.Abs(b))
}
