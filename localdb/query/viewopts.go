package query

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/settee/settee/couchdoc"
)

// ViewOptions are the query options of CouchDB 3.5's _view.
type ViewOptions struct {
	// Keys lists the keys to return, in order (key=K is Keys [K]); nil
	// means a range.
	Keys []json.RawMessage
	// StartKey and EndKey bound the range (nil: unbounded), each with a
	// document id bound when the Has flag is set.
	StartKey, EndKey         json.RawMessage
	StartDocID, EndDocID     string
	HasStartDocID, HasEnd    bool
	InclusiveEnd, Descending bool
	Skip                     int64
	// Limit bounds the rows; negative means none.
	Limit int64
	// Reduce is nil when not given: reduce views reduce, map views don't.
	Reduce *bool
	// Group groups by whole keys; GroupLevel (>= 0 when given) by the
	// first GroupLevel elements of array keys.
	Group         bool
	GroupLevel    int
	HasGroup      bool
	IncludeDocs   bool
	Conflicts     bool
	IncludeDesign bool
	// Update is "true" (bring the view up to date first), "false" or "lazy"
	// (answer from the stored rows; lazy updates after).
	Update    string
	UpdateSeq bool
	// Sorted false drops total_rows and offset from the answer (the rows
	// stay in order here).
	Sorted bool
}

// queryParseError is CouchDB's 400 query_parse_error.
func queryParseError(format string, args ...any) *couchdoc.Error {
	e := couchdoc.Errorf(couchdoc.ErrBadRequest, format, args...)
	e.Name = "query_parse_error"
	return e
}

// ErrInvalidJSON is CouchDB's answer to a JSON option that does not parse.
var ErrInvalidJSON = &couchdoc.Error{Status: http.StatusBadRequest, Name: "bad_request", Reason: "invalid UTF-8 JSON"}

// ViewOptionsFromURL reads the options of a GET _view from its query
// string: key options are JSON text, the others plain words or numbers.
func ViewOptionsFromURL(q url.Values) (*ViewOptions, error) {
	m := map[string]json.RawMessage{}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "key", "keys", "startkey", "start_key", "endkey", "end_key":
			if !json.Valid([]byte(v)) {
				return nil, ErrInvalidJSON
			}
			m[k] = json.RawMessage(v)
		default:
			b, _ := json.Marshal(v)
			m[k] = b
		}
	}
	return ParseViewOptions(m)
}

// ViewOptionsFromJSON reads options given as one JSON object (a POST body,
// an element of queries, the mobile API's optionsJSON), members named as
// CouchDB's query parameters.
func ViewOptionsFromJSON(body []byte) (*ViewOptions, error) {
	m := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "Request body must be a JSON object")
		}
	}
	return ParseViewOptions(m)
}

// ParseViewOptions reads options from their JSON values (a parameter given
// as a string is read as CouchDB reads the query string). Unknown options
// are ignored, as CouchDB does.
func ParseViewOptions(m map[string]json.RawMessage) (*ViewOptions, error) {
	o := &ViewOptions{InclusiveEnd: true, Limit: -1, GroupLevel: -1, Update: "true", Sorted: true}
	var err error
	boolOpt := func(name string, dst *bool) {
		if v, ok := m[name]; ok && err == nil {
			*dst, err = parseBool(v)
		}
	}
	boolOpt("inclusive_end", &o.InclusiveEnd)
	boolOpt("descending", &o.Descending)
	boolOpt("include_docs", &o.IncludeDocs)
	boolOpt("conflicts", &o.Conflicts)
	boolOpt("update_seq", &o.UpdateSeq)
	boolOpt("sorted", &o.Sorted)
	boolOpt("include_design", &o.IncludeDesign)
	if v, ok := m["group"]; ok && err == nil {
		o.HasGroup = true
		o.Group, err = parseBool(v)
	}
	if v, ok := m["reduce"]; ok && err == nil {
		var b bool
		b, err = parseBool(v)
		o.Reduce = &b
	}
	if v, ok := m["skip"]; ok && err == nil {
		o.Skip, err = parseUint(v)
	}
	if v, ok := m["limit"]; ok && err == nil {
		o.Limit, err = parseUint(v)
	}
	if v, ok := m["group_level"]; ok && err == nil {
		var n int64
		n, err = parseUint(v)
		o.GroupLevel = int(n)
	}
	if err != nil {
		return nil, err
	}
	if v, ok := m["update"]; ok {
		s, _ := plain(v)
		switch s {
		case "true", "false", "lazy":
			o.Update = s
		default:
			return nil, queryParseError("Invalid value for `update`.")
		}
	}
	if v, ok := m["stale"]; ok {
		switch s, _ := plain(v); s {
		case "ok":
			o.Update = "false"
		case "update_after":
			o.Update = "lazy"
		default:
			return nil, queryParseError("Invalid value for `stale`.")
		}
	}
	for _, name := range []string{"startkey_docid", "start_key_doc_id"} {
		if v, ok := m[name]; ok {
			o.StartDocID, _ = plain(v)
			o.HasStartDocID = true
			break
		}
	}
	for _, name := range []string{"endkey_docid", "end_key_doc_id"} {
		if v, ok := m[name]; ok {
			o.EndDocID, _ = plain(v)
			o.HasEnd = true
			break
		}
	}
	for _, name := range []string{"startkey", "start_key"} {
		if v, ok := m[name]; ok {
			o.StartKey = v
		}
	}
	for _, name := range []string{"endkey", "end_key"} {
		if v, ok := m[name]; ok {
			o.EndKey = v
		}
	}
	_, hasKey := m["key"]
	_, hasStart := m["startkey"]
	_, hasStart2 := m["start_key"]
	if v, ok := m["keys"]; ok && !hasKey && !hasStart && !hasStart2 {
		// keys with key or a start key is not refused: keys is ignored.
		if err := json.Unmarshal(v, &o.Keys); err != nil || o.Keys == nil {
			return nil, queryParseError("`keys` must be an array of strings.")
		}
	} else if v, ok := m["key"]; ok {
		o.Keys = []json.RawMessage{v}
	}
	return o, nil
}

// plain returns a JSON string's text, or the JSON text itself.
func plain(v json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true
	}
	return string(v), false
}

func parseBool(v json.RawMessage) (bool, error) {
	switch s, _ := plain(v); s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	default:
		return false, queryParseError("Invalid boolean parameter: %q", s)
	}
}

func parseUint(v json.RawMessage) (int64, error) {
	s, _ := plain(v)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, queryParseError("Invalid value for integer: %q", s)
	}
	if n < 0 {
		return 0, queryParseError("Invalid value for positive integer: %q", s)
	}
	return n, nil
}
