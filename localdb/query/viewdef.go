package query

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sort"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// viewKeyVersion is the version of the view key encoding
// (mango.EncodeViewKey).
const viewKeyVersion = 3

// viewDef is one view of a design document.
type viewDef struct {
	Name   string
	Map    string
	Reduce string // "" for a map-only view
}

// designViews is what a design document says about its views: the index
// they share, identified by its signature.
type designViews struct {
	ID       string // _design/NAME
	Language string
	Views    []viewDef // sorted by name: a view's number is its place here
	Lib      json.RawMessage
	// IncludeDesign and LocalSeq are the design document's options.
	IncludeDesign, LocalSeq bool
	Sig                     string
}

// ErrMissingView is CouchDB's 404 for a view the design document lacks.
var ErrMissingView = &couchdoc.Error{Status: http.StatusNotFound, Name: "not_found", Reason: "missing_named_view"}

// loadViews reads design document ddoc (its name, without _design/).
func loadViews(ctx context.Context, db *localdb.DB, ddoc string) (*designViews, error) {
	doc, err := db.Get(ctx, couchdoc.DesignPrefix+ddoc, localdb.GetOptions{})
	if err != nil {
		return nil, err
	}
	return parseDesign(doc.ID, doc.Body)
}

// parseDesign reads the views of a design document body.
func parseDesign(id string, body []byte) (*designViews, error) {
	var d struct {
		Language string `json:"language"`
		Views    map[string]struct {
			Map    *string         `json:"map"`
			Reduce json.RawMessage `json:"reduce"`
		} `json:"views"`
		Options struct {
			IncludeDesign bool `json:"include_design"`
			LocalSeq      bool `json:"local_seq"`
		} `json:"options"`
	}
	var raw struct {
		Views map[string]json.RawMessage `json:"views"`
	}
	if err := json.Unmarshal(body, &d); err != nil {
		return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "invalid design document %s: %v", id, err)
	}
	_ = json.Unmarshal(body, &raw)
	dv := &designViews{ID: id, Language: d.Language, IncludeDesign: d.Options.IncludeDesign, LocalSeq: d.Options.LocalSeq, Lib: raw.Views["lib"]}
	if dv.Language == "" {
		dv.Language = "javascript"
	}
	for name, v := range d.Views {
		if name == "lib" || v.Map == nil {
			continue
		}
		def := viewDef{Name: name, Map: *v.Map}
		var s string
		if json.Unmarshal(v.Reduce, &s) == nil {
			def.Reduce = s
		}
		dv.Views = append(dv.Views, def)
	}
	sort.Slice(dv.Views, func(i, j int) bool { return dv.Views[i].Name < dv.Views[j].Name })
	// viewKeyVersion names the key encoding: a file of another encoding
	// has another signature, so it is rebuilt rather than misread.
	sig, _ := json.Marshal([]any{viewKeyVersion, dv.Language, dv.Views, dv.Lib, dv.IncludeDesign, dv.LocalSeq})
	sum := md5.Sum(sig)
	dv.Sig = hex.EncodeToString(sum[:])
	return dv, nil
}

// view returns the number and definition of view name.
func (dv *designViews) view(name string) (int, *viewDef, error) {
	for i := range dv.Views {
		if dv.Views[i].Name == name {
			return i, &dv.Views[i], nil
		}
	}
	return 0, nil, ErrMissingView
}

// checkLanguage refuses a language other than JavaScript as CouchDB does.
func (dv *designViews) checkLanguage() error {
	if dv.Language != "javascript" {
		return &couchdoc.Error{Status: http.StatusInternalServerError, Name: "unknown_query_language", Reason: dv.Language}
	}
	return nil
}
