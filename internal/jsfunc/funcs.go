package jsfunc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// Emit is one row a map function emitted: key and value as JSON.
type Emit struct {
	Key, Value json.RawMessage
}

// UnmarshalJSON reads the [key, value] pair sandbox.js answers.
func (e *Emit) UnmarshalJSON(b []byte) error {
	var kv [2]json.RawMessage
	if err := json.Unmarshal(b, &kv); err != nil {
		return err
	}
	e.Key, e.Value = kv[0], kv[1]
	return nil
}

// mapSet is what SetMaps was given, and the members of the document the
// functions use (nil: the whole document).
type mapSet struct {
	sources []string
	lib     json.RawMessage
	members []string
}

// SetMaps compiles the map functions that Map runs. lib is the design
// document's views.lib (JSON, null when absent): what require() loads.
func (r *Runtime) SetMaps(sources []string, lib json.RawMessage) error {
	if m := r.maps; m != nil && r.Usable() && slices.Equal(m.sources, sources) && bytes.Equal(m.lib, lib) {
		return nil
	}
	r.maps = nil
	srcs, err := json.Marshal(sources)
	if err != nil {
		return err
	}
	ok, err := r.call("__setMaps", string(srcs), libRoot(lib))
	if err != nil {
		return err
	}
	var texts []string
	if err := json.Unmarshal(ok, &texts); err != nil || len(texts) != len(sources) {
		return fmt.Errorf("decode map functions %s: %v", ok, err)
	}
	m := &mapSet{sources: slices.Clone(sources), lib: bytes.Clone(lib), members: mapMembers(texts)}
	if m.members != nil {
		names, _ := json.Marshal(m.members)
		if _, err := r.call("__setMapMembers", string(names)); err != nil {
			return err
		}
	}
	r.maps = m
	return nil
}

// libRoot is the require root of map functions: {"views": {"lib": lib}}.
func libRoot(lib json.RawMessage) string {
	if len(lib) == 0 {
		return `{}`
	}
	return `{"views":{"lib":` + string(lib) + `}}`
}

// Map runs every map function SetMaps compiled on one document (its JSON)
// and returns, per function, the rows it emitted. A function that throws
// emits nothing for that document (CouchDB logs it and goes on); an
// engine failure (ErrTimeout, ErrMemory) is returned.
func (r *Runtime) Map(doc []byte) ([][]Emit, error) {
	arg, proj := doc, 0
	if m := r.maps; m != nil && m.members != nil && !r.whole {
		if cut, ok := appendMembers(r.cut[:0], doc, m.members); ok {
			arg, proj, r.cut = cut, 1, cut
		}
	}
	ok, err := r.call("__map", string(arg), proj)
	ok, err = r.again(ok, err, func() (json.RawMessage, error) { return r.call("__map", string(doc), 0) })
	if err != nil {
		return nil, err
	}
	var out [][]Emit
	if err := json.Unmarshal(ok, &out); err != nil {
		return nil, fmt.Errorf("decode map rows: %w", err)
	}
	return out, nil
}

// Reduce runs a JavaScript reduce function: keys are the [key, docid]
// pairs (null when rereduce), values the values (or reductions); it
// returns the reduction as JSON.
func (r *Runtime) Reduce(source string, lib json.RawMessage, keys, values json.RawMessage, rereduce bool) (json.RawMessage, error) {
	if keys == nil {
		keys = json.RawMessage("null")
	}
	return r.call("__reduce", source, libRoot(lib), string(keys), string(values), rereduce)
}

// Validate runs a validate_doc_update function of ddoc (its JSON) on a
// write: newDoc, oldDoc (null for a new document), userCtx and secObj are
// JSON. A refusal is a *couchdoc.Error matching couchdoc.ErrForbidden or
// couchdoc.ErrUnauthorized.
func (r *Runtime) Validate(source string, ddoc, newDoc, oldDoc, userCtx, secObj json.RawMessage) error {
	v, err := r.validator(source, ddoc)
	if err != nil {
		return err
	}
	args, proj := v.args(newDoc, oldDoc, userCtx, secObj, !r.whole)
	ok, err := r.call("__validate", v.n, string(args), proj)
	_, err = r.again(ok, err, func() (json.RawMessage, error) {
		// After a restart the validator is registered again.
		v, err := r.validator(source, ddoc)
		if err != nil {
			return nil, err
		}
		args, _ := v.args(newDoc, oldDoc, userCtx, secObj, false)
		return r.call("__validate", v.n, string(args), 0)
	})
	return err
}

// again answers a call that asked for its whole arguments (project.go):
// whole makes it again with them, after a restart of the engine when the
// function was stopped midway (it may have changed this one, as after a
// restart of CouchDB's query server). Other answers pass through.
func (r *Runtime) again(ok json.RawMessage, err error, whole func() (json.RawMessage, error)) (json.RawMessage, error) {
	switch {
	case errors.Is(err, errNeedFull):
		return whole()
	case errors.Is(err, errNeedFresh):
		if err := r.restart(); err != nil {
			return nil, err
		}
		return whole()
	}
	return ok, err
}

// args is the JSON array of the arguments v can see (the others are
// neither sent nor parsed), each with only the members it names when
// project is set and project.go could tell them; proj has bit i set when
// argument i was cut so.
func (v *validatorReg) args(newDoc, oldDoc, userCtx, secObj json.RawMessage, project bool) ([]byte, int) {
	n := len(newDoc) + len(oldDoc) + len(userCtx) + len(secObj) + 4*len("null") + 5
	args := make([]byte, 0, n)
	args = append(args, '[')
	proj := 0
	var cut []byte
	for i, a := range [][]byte{newDoc, oldDoc, userCtx, secObj}[:v.seen] {
		if i > 0 {
			args = append(args, ',')
		}
		a = orNull(a)
		if project && v.members[i] != nil && string(a) != "null" {
			var ok bool
			if cut, ok = appendMembers(cut[:0], a, v.members[i]); ok {
				a = cut
				proj |= 1 << i
			}
		}
		args = appendASCII(args, a)
	}
	return append(args, ']'), proj
}

// appendASCII appends JSON text with every non-ASCII character escaped
// (\uXXXX, surrogate pairs above U+FFFF; an invalid byte becomes U+FFFD,
// as the engine reads it): the same values, but the engine then takes the
// text as a one-byte string and gives it to its parser as is, where UTF-8
// would be widened to UTF-16 and encoded back. Outside strings, JSON has
// no non-ASCII characters.
func appendASCII(dst, src []byte) []byte {
	const hex = "0123456789abcdef"
	esc := func(dst []byte, u rune) []byte {
		return append(dst, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
	}
	for len(src) > 0 {
		i := 0
		for i < len(src) && src[i] < utf8.RuneSelf {
			i++
		}
		dst = append(dst, src[:i]...)
		src = src[i:]
		if len(src) == 0 {
			break
		}
		r, n := utf8.DecodeRune(src)
		src = src[n:]
		if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			dst = esc(esc(dst, r1), r2)
		} else {
			dst = esc(dst, r)
		}
	}
	return dst
}

// validatorReg is a validate_doc_update registered in a runtime: its
// number there, how many of its arguments it can see, and the members of
// each it names (nil: it may see the whole object).
type validatorReg struct {
	n, seen int
	members [4][]string
}

// maxValidators bounds the validators a runtime keeps registered: past
// it (design documents edited many times), they are all dropped.
const maxValidators = 256

// validator returns the registration of source with ddoc, registering it
// the first time: its design document is then not sent again, nor the
// function looked up by its text.
func (r *Runtime) validator(source string, ddoc json.RawMessage) (validatorReg, error) {
	if v, ok := r.validators[source][string(ddoc)]; ok {
		return v, nil
	}
	if r.nValidators >= maxValidators {
		if _, err := r.call("__resetValidators"); err != nil {
			return validatorReg{}, err
		}
		r.validators, r.nValidators = nil, 0
	}
	ok, err := r.call("__setValidator", source, string(orNull(ddoc)))
	if err != nil {
		return validatorReg{}, err
	}
	var reg [3]json.RawMessage
	v := validatorReg{}
	var text string
	if err = json.Unmarshal(ok, &reg); err == nil {
		err = errors.Join(json.Unmarshal(reg[0], &v.n), json.Unmarshal(reg[1], &v.seen), json.Unmarshal(reg[2], &text))
	}
	if err != nil || v.seen < 0 || v.seen > 4 {
		return validatorReg{}, fmt.Errorf("decode validator registration %s: %v", ok, err)
	}
	if v.members = membersRead(text); v.members[0] != nil || v.members[1] != nil || v.members[2] != nil || v.members[3] != nil {
		names, _ := json.Marshal(v.members)
		if _, err := r.call("__setMembers", v.n, string(names)); err != nil {
			return validatorReg{}, err
		}
	}
	if r.validators == nil {
		r.validators = map[string]map[string]validatorReg{}
	}
	if r.validators[source] == nil {
		r.validators[source] = map[string]validatorReg{}
	}
	r.validators[source][string(ddoc)] = v
	r.nValidators++
	return v, nil
}

// Filter runs a filter function of ddoc on documents (a JSON array) with
// req (JSON: CouchDB's request object) and returns whether each passes.
func (r *Runtime) Filter(source string, ddoc, docs, req json.RawMessage) ([]bool, error) {
	members, err := r.filterMembers(source)
	if err != nil {
		return nil, err
	}
	docsArg, reqArg, proj := docs, orNull(req), 0
	if !r.whole {
		if members[0] != nil {
			if cut, ok := cutElements(docs, members[0]); ok {
				docsArg, proj = cut, proj|1
			}
		}
		if members[1] != nil && string(reqArg) != "null" {
			if cut, ok := appendMembers(nil, reqArg, members[1]); ok {
				reqArg, proj = cut, proj|2
			}
		}
	}
	ok, err := r.call("__filter", source, string(orNull(ddoc)), string(docsArg), string(reqArg), proj)
	ok, err = r.again(ok, err, func() (json.RawMessage, error) {
		return r.call("__filter", source, string(orNull(ddoc)), string(docs), string(orNull(req)), 0)
	})
	if err != nil {
		return nil, err
	}
	var out []bool
	if err := json.Unmarshal(ok, &out); err != nil {
		return nil, fmt.Errorf("decode filter answer: %w", err)
	}
	return out, nil
}

// filterMembers returns the members of doc and req that filter source
// names (nil: the whole object), registering them in the engine the
// first time.
func (r *Runtime) filterMembers(source string) ([2][]string, error) {
	if m, ok := r.filters[source]; ok {
		return *m, nil
	}
	if len(r.filters) >= maxValidators {
		if _, err := r.call("__resetFilters"); err != nil {
			return [2][]string{}, err
		}
		r.filters = nil
	}
	ok, err := r.call("__filterText", source)
	if err != nil {
		return [2][]string{}, err
	}
	var text string
	if err := json.Unmarshal(ok, &text); err != nil {
		return [2][]string{}, fmt.Errorf("decode filter text: %w", err)
	}
	read := membersRead(text)
	m := [2][]string{read[0], read[1]}
	if m[0] != nil || m[1] != nil {
		names, _ := json.Marshal(m)
		if _, err := r.call("__setFilterMembers", source, string(names)); err != nil {
			return [2][]string{}, err
		}
	}
	if r.filters == nil {
		r.filters = map[string]*[2][]string{}
	}
	r.filters[source] = &m
	return m, nil
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// Check compiles a function without running it: nil, or the
// compilation_error CouchDB gives (its reason the engine's message and
// the source).
func (r *Runtime) Check(source string) error {
	_, err := r.call("__check", source)
	return err
}
