package query

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/settee/settee/internal/mango"
)

// request is a parsed _find or _explain body.
type request struct {
	selector    *mango.Selector
	sort        []mango.SortField
	fields      []string // nil: every field
	limit, skip int
	bookmark    string
	useIndex    []string // [], [ddoc] or [ddoc, name]
	stats       bool
	// allowFallback (default true) lets a query that use_index cannot
	// serve use another index; conflicts adds each document's _conflicts.
	allowFallback bool
	conflicts     bool
	// body is the request as given: Explain reads the order of the
	// selector's fields from it (selectorFieldOrder).
	body []byte
	raw  map[string]any
}

// DefaultLimit is CouchDB's limit when a query gives none.
const DefaultLimit = 25

// parseRequest validates a _find body as CouchDB's mango_opts does, one
// member after the other in mango_opts' order (the first error found is
// the one returned).
func parseRequest(body []byte) (*request, error) {
	m, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	req := &request{limit: DefaultLimit, raw: m, allowFallback: true, body: body}
	for _, parse := range []func(*request, map[string]any) error{
		(*request).parseSelector,
		(*request).parseSort,
		(*request).parseFields,
		(*request).parsePage,
		(*request).parseUseIndex,
		(*request).parseFlags,
	} {
		if err := parse(req, m); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// parseSelector reads the required "selector", a JSON object.
func (req *request) parseSelector(m map[string]any) error {
	rawSel, ok := m["selector"]
	if !ok {
		return mangoError(http.StatusBadRequest, "missing_required_key", "Missing required key: selector")
	}
	if _, ok := rawSel.(map[string]any); !ok {
		return mangoError(http.StatusBadRequest, "invalid_selector_json", "Selector must be a JSON object, not: %s", jsonText(rawSel))
	}
	var err error
	if req.selector, err = mango.ParseValue(rawSel); err != nil {
		var se *mango.SyntaxError
		if errors.As(err, &se) && se.Op != "" {
			return mangoError(http.StatusBadRequest, "invalid_operator", "Invalid operator: %s", se.Op)
		}
		return err
	}
	return nil
}

// parseSort reads "sort", whose fields must all go one direction.
func (req *request) parseSort(m map[string]any) error {
	v, ok := m["sort"]
	if !ok {
		return nil
	}
	var err error
	if req.sort, err = mango.ParseSort(v); err != nil {
		return mangoError(http.StatusBadRequest, "invalid_sort_json", "Sort must be an array of sort specs, not: %s", jsonText(v))
	}
	if mango.MixedSort(req.sort) {
		return ErrMixedSort
	}
	return nil
}

// parseFields reads "fields", a list of field names.
func (req *request) parseFields(m map[string]any) error {
	v, ok := m["fields"]
	if !ok {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return invalidValue("fields", v)
	}
	// An empty list is every field, as CouchDB's mango_fields:new.
	for _, f := range list {
		s, ok := f.(string)
		if !ok {
			return invalidValue("fields", v)
		}
		req.fields = append(req.fields, s)
	}
	return nil
}

// parsePage reads "limit" and "skip" (non-negative integers) and
// "bookmark".
func (req *request) parsePage(m map[string]any) error {
	for _, k := range []struct {
		name string
		dst  *int
	}{{"limit", &req.limit}, {"skip", &req.skip}} {
		v, ok := m[k.name]
		if !ok {
			continue
		}
		n, ok := v.(json.Number)
		i, err := n.Int64()
		if ok && err == nil && i < 0 {
			return mangoError(http.StatusBadRequest, "invalid_non_neg_integer", "%d is not an integer greater than or equal to zero", i)
		}
		if !ok || err != nil {
			return invalidValue(k.name, v)
		}
		*k.dst = int(min(i, 1<<31))
	}
	if v, ok := m["bookmark"]; ok {
		s, ok := v.(string)
		if !ok {
			return invalidValue("bookmark", v)
		}
		if s != "nil" {
			req.bookmark = s
		}
	}
	return nil
}

// parseUseIndex reads "use_index": a design document, with or without an
// index name, as one string or a list of one or two.
func (req *request) parseUseIndex(m map[string]any) error {
	v, ok := m["use_index"]
	if !ok {
		return nil
	}
	switch x := v.(type) {
	case string:
		// "ddoc", "_design/ddoc", "ddoc/name" or "_design/ddoc/name".
		parts := strings.Split(x, "/")
		if len(parts) > 1 && parts[0] == "_design" {
			parts = parts[1:]
		}
		switch {
		case x == "":
		case len(parts) > 2:
			return mangoError(http.StatusBadRequest, "invalid_index_name", "Invalid index name: %s", x)
		default:
			req.useIndex = parts
		}
	case []any:
		if len(x) > 2 {
			return invalidValue("use_index", v)
		}
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return invalidValue("use_index", v)
			}
			req.useIndex = append(req.useIndex, s)
		}
	default:
		return invalidValue("use_index", v)
	}
	if len(req.useIndex) > 0 {
		req.useIndex[0] = designID(req.useIndex[0])
	}
	return nil
}

// parseFlags reads the booleans "allow_fallback", "conflicts" and
// "execution_stats".
func (req *request) parseFlags(m map[string]any) error {
	for name, dst := range map[string]*bool{"allow_fallback": &req.allowFallback, "conflicts": &req.conflicts} {
		if v, ok := m[name]; ok {
			b, ok := v.(bool)
			if !ok {
				return mangoError(http.StatusBadRequest, "invalid_boolean", "Invalid boolean value: %s", jsonText(v))
			}
			*dst = b
		}
	}
	if v, ok := m["execution_stats"]; ok {
		b, ok := v.(bool)
		if !ok {
			return invalidValue("execution_stats", v)
		}
		req.stats = b
	}
	return nil
}

func invalidValue(name string, v any) error {
	return mangoError(http.StatusBadRequest, "invalid_value", "Invalid value for %s: %s", name, jsonText(v))
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// selectorFieldOrder lists the field paths of the request's selector in
// the order they appear (operators seen through), for Explain.
func selectorFieldOrder(body []byte) []string {
	v, err := decodeOrdered(body)
	req, ok := v.(ordObject)
	if err != nil || !ok {
		return nil
	}
	var out []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case ordObject:
			for _, m := range x {
				switch {
				case strings.HasPrefix(m.key, "$"):
					walk(m.val, path)
				case path == "":
					walk(m.val, m.key)
				default:
					walk(m.val, path+"."+m.key)
				}
			}
		case []any:
			for _, e := range x {
				walk(e, path)
			}
		}
		if path != "" {
			out = append(out, path)
		}
	}
	for _, m := range req {
		if m.key == "selector" {
			walk(m.val, "")
		}
	}
	return out
}
