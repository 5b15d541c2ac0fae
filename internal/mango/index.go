package mango

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/settee/settee/couchdoc"
)

// SortField is one field of a sort or of an index definition.
type SortField struct {
	Field string
	Desc  bool
}

// ParseSort parses CouchDB's sort syntax, an array of field names and
// {"field": "asc"|"desc"} objects. It returns a *SyntaxError for anything
// else.
func ParseSort(v any) ([]SortField, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, &SyntaxError{Reason: "sort must be an array"}
	}
	out := make([]SortField, 0, len(list))
	for _, item := range list {
		switch x := item.(type) {
		case string:
			out = append(out, SortField{Field: x})
		case map[string]any:
			if len(x) != 1 {
				return nil, &SyntaxError{Reason: "each sort object must have exactly one field"}
			}
			for f, dir := range x {
				switch dir {
				case "asc":
					out = append(out, SortField{Field: f})
				case "desc":
					out = append(out, SortField{Field: f, Desc: true})
				default:
					return nil, &SyntaxError{Reason: fmt.Sprintf("invalid sort direction %v", dir)}
				}
			}
		default:
			return nil, &SyntaxError{Reason: "invalid sort field"}
		}
	}
	return out, nil
}

// ErrMixedSort is CouchDB's answer to a sort, or an index's fields, in
// both directions (mango_sort:validate).
var ErrMixedSort = &couchdoc.Error{Status: http.StatusBadRequest, Name: "unsupported_mixed_sort",
	Reason: "Sorts currently only support a single direction for all fields."}

// MixedSort reports whether fields go in both directions.
func MixedSort(fields []SortField) bool {
	for _, f := range fields {
		if f.Desc != fields[0].Desc {
			return true
		}
	}
	return false
}

// SortJSON is fields as CouchDB lists them: [{"field": "asc"}, ...].
func SortJSON(fields []SortField) []any {
	out := make([]any, len(fields))
	for i, f := range fields {
		dir := "asc"
		if f.Desc {
			dir = "desc"
		}
		out[i] = map[string]any{f.Field: dir}
	}
	return out
}

// Index is a json index as CouchDB 3 defines it: one view of a design
// document whose language is "query". A document is in the index when it
// has every field (and matches the partial filter selector); its key is
// the array of those fields' values.
type Index struct {
	DDoc   string // "_design/..."
	Name   string
	Fields []SortField
	// Partial is the partial_filter_selector, nil when there is none;
	// PartialRaw its JSON.
	Partial    *Selector
	PartialRaw map[string]any
	// paths are the Fields' split paths, when the parser has set them.
	paths [][]string
}

// setPaths records the split paths of ix.Fields.
func (ix *Index) setPaths() {
	ix.paths = make([][]string, len(ix.Fields))
	for i, f := range ix.Fields {
		ix.paths[i] = splitPath(f.Field)
	}
}

// View returns the view CouchDB stores for the index in its design doc:
// {"map": {"fields": {...}, "partial_filter_selector": {...}},
// "reduce": "_count", "options": {"def": {...}}}; the map's selector is
// normalized, def is the index definition as the user gave it.
func (ix *Index) View(def json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"map":{"fields":{`)
	for i, f := range ix.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Field)
		b.Write(k)
		if f.Desc {
			b.WriteString(`:"desc"`)
		} else {
			b.WriteString(`:"asc"`)
		}
	}
	b.WriteString(`},"partial_filter_selector":`)
	pj, _ := json.Marshal(ix.partialNormalized())
	b.Write(pj)
	b.WriteString(`},"reduce":"_count","options":{"def":`)
	b.Write(def)
	b.WriteString(`}}`)
	return b.Bytes()
}

// DefJSON is the index's def as _index lists it: its fields, and its
// partial_filter_selector when it has one.
func (ix *Index) DefJSON() map[string]any {
	def := map[string]any{"fields": SortJSON(ix.Fields)}
	if ix.Partial != nil {
		def["partial_filter_selector"] = ix.partialNormalized()
	}
	return def
}

// partialNormalized is the partial filter selector as CouchDB stores and
// lists it, normalized ({"done": true} is {"done": {"$eq": true}}); {}
// when there is none.
func (ix *Index) partialNormalized() map[string]any {
	if ix.Partial == nil {
		return map[string]any{}
	}
	return ix.Partial.Normalized()
}

// Columns returns the indexed fields' names.
func (ix *Index) Columns() []string {
	out := make([]string, len(ix.Fields))
	for i, f := range ix.Fields {
		out[i] = f.Field
	}
	return out
}

// Entry returns the index key of a decoded document (its user fields plus
// _id and _rev): EncodeKey of each field's value in turn. ok is false when
// the document is not in the index: a field is missing or the partial
// filter selector does not match.
func (ix *Index) Entry(dst []byte, doc map[string]any) (key []byte, ok bool) {
	if ix.Partial != nil && !ix.Partial.Match(doc) {
		return dst, false
	}
	for i, f := range ix.Fields {
		var v any
		var found bool
		if len(ix.paths) == len(ix.Fields) {
			v, found = lookup(doc, true, ix.paths[i])
		} else {
			v, found = Lookup(doc, f.Field)
		}
		if !found {
			return dst, false
		}
		dst = EncodeKey(dst, v)
	}
	return dst, true
}

// Same reports whether two indexes have the same definition.
func (ix *Index) Same(o *Index) bool {
	a, _ := json.Marshal(ix.DefJSON())
	b, _ := json.Marshal(o.DefJSON())
	return ix.DDoc == o.DDoc && ix.Name == o.Name && bytes.Equal(a, b)
}

// ParseIndexDef parses the "index" object of a create-index request:
// {"fields": [...], "partial_filter_selector": {...}}. It returns a
// bad_request *couchdoc.Error for a bad definition.
func ParseIndexDef(v any) (*Index, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "Invalid index definition: index must be an object")
	}
	rawFields, ok := obj["fields"]
	if !ok {
		return nil, &couchdoc.Error{Status: http.StatusBadRequest, Name: "missing_required_key", Reason: "Missing required key: fields"}
	}
	fields, err := ParseSort(rawFields)
	if err != nil {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "Invalid sort field: %v", rawFields)
	}
	if len(fields) == 0 {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "Invalid index definition: fields must not be empty")
	}
	if MixedSort(fields) {
		return nil, ErrMixedSort
	}
	ix := &Index{Fields: fields}
	ix.setPaths()
	for k, pv := range obj {
		switch k {
		case "fields":
		case "partial_filter_selector":
			p, ok := pv.(map[string]any)
			if !ok {
				return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "Invalid partial_filter_selector")
			}
			if len(p) > 0 {
				sel, err := ParseValue(p)
				if err != nil {
					return nil, err
				}
				ix.Partial, ix.PartialRaw = sel, p
			}
		default:
			// CouchDB 3 ignores unknown members of a json index def.
		}
	}
	return ix, nil
}

// IndexesFromDesign returns the json indexes of a design document body
// (without _id): none unless its language is "query". Views that are not
// valid index definitions are skipped, as CouchDB skips them.
func IndexesFromDesign(ddoc string, body []byte) []*Index {
	var d struct {
		Language string                     `json:"language"`
		Views    map[string]json.RawMessage `json:"views"`
	}
	if json.Unmarshal(body, &d) != nil || d.Language != "query" {
		return nil
	}
	var out []*Index
	for _, name := range sortedRawKeys(d.Views) {
		if ix := parseView(ddoc, name, d.Views[name]); ix != nil {
			out = append(out, ix)
		}
	}
	return out
}

func sortedRawKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// parseView reads one stored view: map.fields, an object whose member
// order is the column order, and map.partial_filter_selector.
func parseView(ddoc, name string, raw json.RawMessage) *Index {
	var v struct {
		Map struct {
			Fields  json.RawMessage `json:"fields"`
			Partial json.RawMessage `json:"partial_filter_selector"`
		} `json:"map"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	fields, err := orderedSortObject(v.Map.Fields)
	if err != nil || len(fields) == 0 {
		return nil
	}
	ix := &Index{DDoc: ddoc, Name: name, Fields: fields}
	ix.setPaths()
	if len(v.Map.Partial) > 0 && string(v.Map.Partial) != "null" {
		dec := json.NewDecoder(bytes.NewReader(v.Map.Partial))
		dec.UseNumber()
		var p map[string]any
		if dec.Decode(&p) != nil {
			return nil
		}
		if len(p) > 0 {
			sel, err := ParseValue(p)
			if err != nil {
				return nil
			}
			ix.Partial, ix.PartialRaw = sel, p
		}
	}
	return ix
}

// orderedSortObject reads {"a": "asc", "b": "desc"} keeping member order.
func orderedSortObject(raw json.RawMessage) ([]SortField, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("fields is not an object")
	}
	var out []SortField
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		d, err := dec.Token()
		if err != nil {
			return nil, err
		}
		dir, _ := d.(string)
		if dir != "asc" && dir != "desc" {
			return nil, fmt.Errorf("bad direction %v", d)
		}
		out = append(out, SortField{Field: k.(string), Desc: dir == "desc"})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data")
	}
	return out, nil
}

// IsDesignID reports whether id names a design document.
func IsDesignID(id string) bool { return strings.HasPrefix(id, "_design/") }
