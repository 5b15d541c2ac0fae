package validate

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/settee/settee/couchdoc"
)

// builtinReduces are the reduce functions CouchDB 3.5 has built in.
var builtinReduces = map[string]bool{"_count": true, "_sum": true, "_stats": true, "_approx_count_distinct": true}

// invalidDesign is CouchDB's 400 invalid_design_doc.
func invalidDesign(format string, args ...any) error {
	e := couchdoc.Errorf(couchdoc.ErrBadRequest, format, args...)
	e.Name = "invalid_design_doc"
	return e
}

// checkDesign refuses a design document CouchDB 3.5 refuses on write:
// members of the wrong type, a view without a map function, an unknown
// built-in reduce, and JavaScript map and reduce functions that do not
// compile (validate_doc_update and filters are only compiled when they
// run, as in CouchDB).
func (v *Validator) checkDesign(body []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil // not an object: the store refuses it
	}
	kind := func(name string, want byte, what string) error {
		raw, ok := m[name]
		if !ok || string(raw) == "null" {
			return nil
		}
		if len(raw) == 0 || raw[0] != want {
			return invalidDesign("`%s` field must have %s type", name, what)
		}
		return nil
	}
	for _, c := range []struct {
		name string
		want byte
		what string
	}{{"language", '"', "string"}, {"options", '{', "object"}, {"views", '{', "object"},
		{"filters", '{', "object"}, {"shows", '{', "object"}, {"lists", '{', "object"}, {"updates", '{', "object"},
		{"validate_doc_update", '"', "string"}} {
		if err := kind(c.name, c.want, c.what); err != nil {
			return err
		}
	}
	var lang string
	_ = json.Unmarshal(m["language"], &lang)
	if lang != "" && lang != "javascript" {
		return nil
	}
	var views map[string]json.RawMessage
	_ = json.Unmarshal(m["views"], &views)
	names := make([]string, 0, len(views))
	for name := range views {
		names = append(names, name)
	}
	sort.Strings(names)
	type fn struct{ what, view, src string }
	var compile []fn
	for _, name := range names {
		if name == "lib" {
			continue
		}
		raw := views[name]
		if len(raw) == 0 || raw[0] != '{' {
			return invalidDesign("`views.%s` field must have object type", name)
		}
		var view map[string]json.RawMessage
		_ = json.Unmarshal(raw, &view)
		mapRaw, ok := view["map"]
		if !ok {
			return invalidDesign("View `%s` must contain map function", name)
		}
		var mapSrc string
		if json.Unmarshal(mapRaw, &mapSrc) != nil {
			return invalidDesign("`views.%s.map` field must have string type", name)
		}
		compile = append(compile, fn{"map", name, mapSrc})
		if redRaw, ok := view["reduce"]; ok {
			var red string
			if json.Unmarshal(redRaw, &red) != nil {
				return invalidDesign("`views.%s.reduce` field must have string type", name)
			}
			if strings.HasPrefix(red, "_") {
				if !builtinReduces[red] {
					return invalidDesign("`%s` is not a supported reduce function.", red)
				}
			} else {
				compile = append(compile, fn{"reduce", name, red})
			}
		}
	}
	if len(compile) == 0 {
		return nil
	}
	pool := v.pools.For("\x00compile")
	rt, err := pool.Get()
	if err != nil {
		return err
	}
	defer pool.Put(rt)
	for _, f := range compile {
		if err := rt.Check(f.src); err != nil {
			var ce *couchdoc.Error
			if !errorsAs(err, &ce) || ce.Name != "compilation_error" {
				return err
			}
			return &couchdoc.Error{Status: http.StatusBadRequest, Name: "compilation_error",
				Reason: "Compilation of the " + f.what + " function in the '" + f.view + "' view failed: " + ce.Reason}
		}
	}
	return nil
}
