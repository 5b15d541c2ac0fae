package couchcorpus

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Exchange is one recorded HTTP request and CouchDB's answer.
type Exchange struct {
	Seq          int               `json:"seq"`
	Conn         int               `json:"conn"`
	StartMS      float64           `json:"t_start_ms"`
	DurationMS   float64           `json:"duration_ms"`
	Method       string            `json:"method"`
	Path         string            `json:"path"`
	PathSegments []string          `json:"path_segments"`
	Query        string            `json:"query"`
	ReqHeaders   map[string]string `json:"req_headers"`
	Note         string            `json:"note"`
	ReqBody      string            `json:"req_body"`
	ReqBodyB64   bool              `json:"req_body_base64"`
	Status       int               `json:"status"`
	RespHeaders  map[string]any    `json:"resp_headers"`
	RespBody     string            `json:"resp_body"`
	RespBodyB64  bool              `json:"resp_body_base64"`
	Incomplete   bool              `json:"incomplete"`
	Aborted      bool              `json:"client_aborted"`
	Chunks       [][2]any          `json:"resp_chunks"`
}

// RequestBody is the request body's bytes.
func (e *Exchange) RequestBody() []byte { return decode(e.ReqBody, e.ReqBodyB64) }

// ResponseBody is the answer's body bytes, as sent.
func (e *Exchange) ResponseBody() []byte { return decode(e.RespBody, e.RespBodyB64) }

// RespHeader is one response header ("" when absent; the first value when
// it occurred twice). Names match case-insensitively.
func (e *Exchange) RespHeader(name string) string {
	for k, v := range e.RespHeaders {
		if !strings.EqualFold(k, name) {
			continue
		}
		switch v := v.(type) {
		case string:
			return v
		case []any:
			if len(v) > 0 {
				s, _ := v[0].(string)
				return s
			}
		}
	}
	return ""
}

// ReqHeader is one request header, "" when absent.
func (e *Exchange) ReqHeader(name string) string {
	for k, v := range e.ReqHeaders {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// IsFeed reports whether the request is a long-lived changes feed, whose
// answer depends on timing (longpoll, continuous, eventsource).
func (e *Exchange) IsFeed() bool {
	return strings.Contains(e.Query, "feed=longpoll") || strings.Contains(e.Query, "feed=continuous") ||
		strings.Contains(e.Query, "feed=eventsource")
}

func decode(s string, b64 bool) []byte {
	if !b64 {
		return []byte(s)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(fmt.Sprintf("couchcorpus: bad base64 body: %v", err))
	}
	return b
}

// Dir returns the corpus directory, testdata/couchdb35 at the module root,
// found by walking up from the working directory (tests run in their
// package's directory).
func Dir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			dir := filepath.Join(d, "testdata", "couchdb35")
			if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
				return "", fmt.Errorf("couchcorpus: no corpus at %s: %w", dir, err)
			}
			return dir, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("couchcorpus: no go.mod above %s", wd)
		}
	}
}

// ReadExchanges reads one exchanges/*.jsonl file of the corpus, in seq
// order; a name with a slash is taken from testdata instead (such as
// "couchdb35-extra/find.jsonl", recorded the same way).
func ReadExchanges(name string) ([]Exchange, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "exchanges", name)
	if strings.Contains(name, "/") {
		path = filepath.Join(filepath.Dir(dir), name)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Exchange
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 8<<20)
	for sc.Scan() {
		var e Exchange
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("couchcorpus: %s line %d: %w", name, len(out)+1, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// DatasetLines reads a dataset file (dataset.ndjson or
// dataset-incremental.ndjson): one JSON document per line.
func DatasetLines(name string) ([]json.RawMessage, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	var out []json.RawMessage
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		out = append(out, json.RawMessage(line))
	}
	return out, nil
}
