package testutil

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// requestBound bounds a request whose context has no deadline: a guard
// against a hang.
const requestBound = 2 * time.Minute

// Do sends one request and returns the answer's status and body. body is
// nil or "" (no body), a string or []byte (sent as is) or any other value (sent
// as JSON); with a body the request says Content-Type: application/json.
// Every request says Accept: application/json, as PouchDB and Settee's
// client do (without it CouchDB answers open_revs and attachments=true as
// multipart). hdr holds name, value pairs that override those headers. A
// transport error fails the test.
func Do(ctx context.Context, t testing.TB, method, u string, body any, hdr ...string) (int, []byte) {
	t.Helper()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, requestBound)
		defer cancel()
	}
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		if b != "" {
			rd = strings.NewReader(b)
		}
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("%s %s: %v", method, Redact(u), err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, Redact(u), err)
	}
	req.Header.Set("Accept", "application/json")
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, Redact(u), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, Redact(u), err)
	}
	return resp.StatusCode, data
}

// DoJSON is Do with the answer decoded into out (when not nil). A 2xx
// answer that does not decode fails the test; an error answer is decoded
// where it can be (CouchDB's {"error", "reason"}) and never fails it. It
// returns the status.
func DoJSON(ctx context.Context, t testing.TB, method, u string, body, out any) int {
	t.Helper()
	st, data := Do(ctx, t, method, u, body)
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil && st/100 == 2 {
			t.Fatalf("%s %s: decode: %v: %.200s", method, Redact(u), err, data)
		}
	}
	return st
}

// Redact drops the userinfo of a URL, for messages.
func Redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "<bad url>"
	}
	p.User = nil
	return p.String()
}
