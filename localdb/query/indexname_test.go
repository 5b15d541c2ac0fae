package query

import "testing"

// TestGenIndexName checks generated names against CouchDB 3.5 (OTP 25):
// the first is from the recorded corpus (couchdb35-extra/find#4), the
// others were computed with erlang's term_to_binary as mango_idx:gen_name
// does.
func TestGenIndexName(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"index": {"fields": ["type"]}}`, "458b331165753cc426af26b56eb49bb468c9d85c"},
		{`{"index": {"fields": [{"score": "desc"}, "n"], "partial_filter_selector": {"done": true, "x": null, "f": 1.5,
			"neg": -7, "big": 123456789012, "u": "東京", "e": {}, "a": []}}}`, "d5136a62c34fc2549e9f81e12b77ae2908e68260"},
		{`{"ddoc": "myddoc", "w": 3, "partitioned": false, "index": {"fields": ["a.b"]}}`, "4aedad6d41c1d00fe06a86deb85ade7e2f1db40a"},
		{`{"index": {"fields": ["a.b"]}, "name": "nm", "type": "json"}`, "f14f146d215ab48663675e44e5b6d83178c70f70"},
	} {
		got, err := genIndexName([]byte(c.body))
		if err != nil || got != c.want {
			t.Errorf("%s: %s, %v; want %s", c.body, got, err, c.want)
		}
	}
}
