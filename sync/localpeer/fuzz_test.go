package localpeer

import (
	"encoding/json"
	"testing"
)

// FuzzParseSeq: any since value is either a non-negative sequence that
// formats back to a number, or a clean error.
func FuzzParseSeq(f *testing.F) {
	for _, s := range []string{`0`, `42`, `"17"`, `null`, ``, `-1`, `"abc"`, `{}`, `1e3`, `"9223372036854775808"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		n, err := parseSeq(json.RawMessage(raw))
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("%q parsed to %d", raw, n)
		}
		back, err := parseSeq(seqJSON(n))
		if err != nil || back != n {
			t.Fatalf("round trip of %d: %d %v", n, back, err)
		}
	})
}
