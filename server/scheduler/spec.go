package scheduler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/settee/settee/couchdoc"
)

// Spec is a replication document as CouchDB 3.5 takes it (ParseSpec).
type Spec struct {
	Source, Target Endpoint
	Continuous     bool
	CreateTarget   bool
	DocIDs         []string
	Selector       json.RawMessage
	Filter         string
	QueryParams    map[string]string
	// SinceSeq starts the feed there instead of at the checkpoint.
	SinceSeq json.RawMessage
	// CheckpointInterval in milliseconds; 0 is the default.
	CheckpointInterval int64
	// UseCheckpoints is false when the document says so.
	UseCheckpoints  bool
	WorkerBatchSize int
	// Owner is the user who wrote the document ("owner").
	Owner string
	// State is the document's _replication_state: "completed" or "failed"
	// documents are not run again.
	State string
}

// Endpoint is a replication's source or target: an http(s) URL and how
// to authenticate there. Its credentials never leave the scheduler.
type Endpoint struct {
	URL      string // as written, credentials included
	Headers  map[string]string
	Username string
	Password string
	Session  bool // auth.session: log in with POST /_session
}

// Display is the endpoint's URL as CouchDB shows it: without credentials
// and with a trailing slash.
func (e Endpoint) Display() string {
	u, err := url.Parse(e.URL)
	if err != nil {
		return ""
	}
	u.User = nil
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return u.String()
}

// forbidden is CouchDB's refusal of a replication document on write.
func forbidden(format string, args ...any) error {
	return couchdoc.Errorf(couchdoc.ErrForbidden, format, args...)
}

// badParam is CouchDB's refusal of a parameter of the wrong type.
func badParam(name, want string) error {
	return forbidden("{throw,{bad_request,<<\"parameter `%s` must be %s\">>}}", name, want)
}

// errBadArg is CouchDB's reason for a value its parser cannot convert.
var errBadArg = forbidden("{error,badarg}")

// ParseSpec checks a replication document's body (its user fields) as
// CouchDB 3.5's _replicator does on write, and returns what it says. A
// refusal is a *couchdoc.Error (403 forbidden) with CouchDB's reason.
func ParseSpec(body []byte) (*Spec, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "Document must be a JSON object")
	}
	sp := &Spec{UseCheckpoints: true}
	if m["source"] == nil || m["target"] == nil || isNull(m["source"]) || isNull(m["target"]) {
		return nil, forbidden("Missing replicator database")
	}
	var err error
	if sp.Source, err = parseEndpoint(m["source"]); err != nil {
		return nil, err
	}
	if sp.Target, err = parseEndpoint(m["target"]); err != nil {
		return nil, err
	}
	for name, dst := range map[string]*bool{"continuous": &sp.Continuous, "create_target": &sp.CreateTarget, "use_checkpoints": &sp.UseCheckpoints} {
		if raw, ok := m[name]; ok && !isNull(raw) {
			if err := json.Unmarshal(raw, dst); err != nil {
				return nil, badParam(name, "a boolean")
			}
		}
	}
	if raw, ok := m["cancel"]; ok && !isNull(raw) {
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return nil, badParam("cancel", "a boolean")
		}
	}
	if raw, ok := m["doc_ids"]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &sp.DocIDs) != nil {
			return nil, badParam("doc_ids", "an array")
		}
	}
	if raw, ok := m["filter"]; ok && !isNull(raw) {
		if json.Unmarshal(raw, &sp.Filter) != nil {
			return nil, errBadArg
		}
	}
	if raw, ok := m["selector"]; ok && !isNull(raw) {
		if !isObject(raw) {
			return nil, badParam("selector", "a JSON object")
		}
		sp.Selector = raw
	}
	if raw, ok := m["query_params"]; ok && !isNull(raw) {
		var qp map[string]any
		if !isObject(raw) || json.Unmarshal(raw, &qp) != nil {
			return nil, badParam("query_params", "an object")
		}
		sp.QueryParams = map[string]string{}
		for k, v := range qp {
			if s, ok := v.(string); ok {
				sp.QueryParams[k] = s
			} else {
				b, _ := json.Marshal(v)
				sp.QueryParams[k] = string(b)
			}
		}
	}
	exclusive := 0
	for _, set := range []bool{sp.DocIDs != nil, sp.Filter != "", sp.Selector != nil} {
		if set {
			exclusive++
		}
	}
	if exclusive > 1 {
		return nil, forbidden("{throw,{bad_request,\"`doc_ids`,`filter`,`selector` are mutually exclusive\"}}")
	}
	if raw, ok := m["since_seq"]; ok && !isNull(raw) {
		sp.SinceSeq = raw
	}
	for name, dst := range map[string]*int64{"checkpoint_interval": &sp.CheckpointInterval} {
		if raw, ok := m[name]; ok && !isNull(raw) {
			if err := json.Unmarshal(raw, dst); err != nil {
				return nil, errBadArg
			}
		}
	}
	for _, name := range []string{"worker_batch_size", "worker_processes", "http_connections", "connection_timeout", "retries_per_request"} {
		raw, ok := m[name]
		if !ok || isNull(raw) {
			continue
		}
		var n int
		if json.Unmarshal(raw, &n) != nil {
			return nil, errBadArg
		}
		if name == "worker_batch_size" {
			sp.WorkerBatchSize = n
		}
	}
	if raw, ok := m["owner"]; ok {
		_ = json.Unmarshal(raw, &sp.Owner)
	}
	if raw, ok := m["_replication_state"]; ok {
		_ = json.Unmarshal(raw, &sp.State)
	}
	return sp, nil
}

// parseEndpoint reads "source" or "target": a URL, or an object with
// url, headers and auth.
func parseEndpoint(raw json.RawMessage) (Endpoint, error) {
	var e Endpoint
	var s string
	if json.Unmarshal(raw, &s) == nil {
		e.URL = s
		return e, checkURL(s)
	}
	var obj struct {
		URL     any               `json:"url"`
		Headers map[string]string `json:"headers"`
		Auth    map[string]struct {
			Username string `json:"username"`
			Password string `json:"password"`
		} `json:"auth"`
	}
	if !isObject(raw) || json.Unmarshal(raw, &obj) != nil {
		return e, forbidden("endpoint has an invalid url")
	}
	u, ok := obj.URL.(string)
	if !ok {
		return e, forbidden("endpoint has an invalid url")
	}
	e.URL, e.Headers = u, obj.Headers
	if b, ok := obj.Auth["basic"]; ok {
		e.Username, e.Password = b.Username, b.Password
	} else if b, ok := obj.Auth["session"]; ok {
		e.Username, e.Password, e.Session = b.Username, b.Password, true
	}
	return e, checkURL(u)
}

// checkURL refuses what CouchDB 3 refuses as an endpoint: a local name
// or a URL that is not http(s).
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return forbidden("local_endpoints_not_supported")
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// String describes the spec for logs: URLs without credentials.
func (sp *Spec) String() string {
	return fmt.Sprintf("%s -> %s continuous=%v", sp.Source.Display(), sp.Target.Display(), sp.Continuous)
}
