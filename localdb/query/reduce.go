package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/jsfunc"
)

// Reductions are computed when a view is queried, over the rows of each
// group: built-in reduces in Go, JavaScript ones in chunks of reduceChunk
// rows, then rereduced.
const reduceChunk = 200

// builtinReduces are CouchDB's built-in reduce functions.
var builtinReduces = map[string]bool{"_count": true, "_sum": true, "_stats": true, "_approx_count_distinct": true}

// reduceRow is one row given to a reduction.
type reduceRow struct {
	key   []byte // encoded
	kjson []byte
	id    string
	value []byte
}

// errSumValue is the reason of _sum's error.
const errSumValue = "The _sum function requires that map values be numbers, arrays of numbers, or objects. Objects cannot be mixed with other data structures. Objects can be arbitrarily nested, provided that the values for all fields are themselves numbers, arrays of numbers, or objects."

// reducer reduces groups of rows with one view's reduce function.
type reducer struct {
	src  string
	lib  json.RawMessage
	pool *jsfunc.Pool
}

// reduce returns the reduction of rows as JSON.
func (r *reducer) reduce(rows []reduceRow) (json.RawMessage, error) {
	switch r.src {
	case "_count":
		return json.Marshal(len(rows))
	case "_approx_count_distinct":
		seen := map[string]bool{}
		for _, row := range rows {
			seen[string(row.key)] = true
		}
		return json.Marshal(len(seen))
	case "_sum":
		var acc any
		for _, row := range rows {
			if f, ok := plainNumber(row.value); ok {
				if a, isNum := acc.(float64); isNum || acc == nil {
					acc = a + f
					continue
				}
			}
			v, err := decodeNumber(row.value)
			if err == nil {
				acc, err = sumValues(acc, v)
			}
			if err != nil {
				return builtinError(errSumValue, row.value), nil
			}
		}
		if acc == nil {
			acc = 0.0
		}
		return json.Marshal(acc)
	case "_stats":
		return statsOf(rows)
	}
	if len(r.src) > 0 && r.src[0] == '_' && !builtinReduces[r.src] {
		e := couchdoc.Errorf(couchdoc.ErrBadRequest, "`%s` is not a supported reduce function.", r.src)
		e.Name = "invalid_design_doc"
		return nil, e
	}
	return r.reduceJS(rows)
}

// builtinError is the value CouchDB gives a group whose values a built-in
// reduce cannot take.
func builtinError(reason string, cause []byte) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"error": "builtin_reduce_error", "reason": reason, "caused_by": json.RawMessage(cause)})
	return b
}

// plainNumber reads a JSON number without a decoder (most values of a
// summed view are).
func plainNumber(b []byte) (float64, bool) {
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b), 64)
	return f, err == nil
}

func decodeNumber(b []byte) (any, error) {
	var v any
	err := json.Unmarshal(b, &v)
	return v, err
}

// sumValues adds v to acc as CouchDB's _sum does: numbers, arrays of
// numbers (element-wise, the shorter padded) and objects (member-wise).
func sumValues(acc, v any) (any, error) {
	if acc == nil {
		acc = zeroLike(v)
		if acc == nil {
			return nil, errBadSum
		}
	}
	switch a := acc.(type) {
	case float64:
		if x, ok := v.(float64); ok {
			return a + x, nil
		}
		if x, ok := v.([]any); ok {
			return sumValues([]any{a}, x)
		}
	case []any:
		x, ok := v.([]any)
		if !ok {
			if f, isNum := v.(float64); isNum {
				x = []any{f}
			} else {
				return nil, errBadSum
			}
		}
		for i, e := range x {
			f, ok := e.(float64)
			if !ok {
				return nil, errBadSum
			}
			if i < len(a) {
				af, _ := a[i].(float64)
				a[i] = af + f
			} else {
				a = append(a, f)
			}
		}
		return a, nil
	case map[string]any:
		x, ok := v.(map[string]any)
		if !ok {
			return nil, errBadSum
		}
		for k, e := range x {
			s, err := sumValues(a[k], e)
			if err != nil {
				return nil, err
			}
			a[k] = s
		}
		return a, nil
	}
	return nil, errBadSum
}

var errBadSum = &couchdoc.Error{Status: http.StatusInternalServerError, Name: "builtin_reduce_error", Reason: errSumValue}

func zeroLike(v any) any {
	switch v.(type) {
	case float64:
		return 0.0
	case []any:
		return []any{}
	case map[string]any:
		return map[string]any{}
	}
	return nil
}

type stats struct {
	Sum    float64 `json:"sum"`
	Count  float64 `json:"count"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Sumsqr float64 `json:"sumsqr"`
}

func (s *stats) add(f float64) {
	if s.Count == 0 {
		s.Min, s.Max = f, f
	}
	s.Sum += f
	s.Count++
	s.Min = math.Min(s.Min, f)
	s.Max = math.Max(s.Max, f)
	s.Sumsqr += f * f
}

// statsOf is _stats: of numbers, or element-wise of arrays of numbers.
func statsOf(rows []reduceRow) (json.RawMessage, error) {
	var one stats
	var many []stats
	for _, row := range rows {
		if f, ok := plainNumber(row.value); ok && many == nil {
			one.add(f)
			continue
		}
		v, _ := decodeNumber(row.value)
		switch x := v.(type) {
		case float64:
			if many != nil {
				return builtinError("The _stats function requires that map values be numbers or arrays of numbers", row.value), nil
			}
			one.add(x)
		case []any:
			if one.Count > 0 {
				return builtinError("The _stats function requires that map values be numbers or arrays of numbers", row.value), nil
			}
			for i, e := range x {
				f, ok := e.(float64)
				if !ok {
					return builtinError("The _stats function requires that map values be numbers or arrays of numbers", row.value), nil
				}
				for len(many) <= i {
					many = append(many, stats{})
				}
				many[i].add(f)
			}
		case string:
			// CouchDB fails the query, naming the value as Erlang prints a binary.
			parts := make([]string, len(x))
			for i := 0; i < len(x); i++ {
				parts[i] = strconv.Itoa(int(x[i]))
			}
			return nil, &couchdoc.Error{Status: http.StatusInternalServerError, Name: "invalid_value", Reason: "non-numeric _stats input: <<" + strings.Join(parts, ",") + ">>", Ref: 270952464}
		default:
			return builtinError("The _stats function requires that map values be numbers or arrays of numbers", row.value), nil
		}
	}
	if many != nil {
		return json.Marshal(many)
	}
	return json.Marshal(one)
}

// reduceJS runs a JavaScript reduce over rows, chunk by chunk, and
// rereduces the chunks' reductions.
func (r *reducer) reduceJS(rows []reduceRow) (json.RawMessage, error) {
	rt, err := r.pool.Get()
	if err != nil {
		return nil, err
	}
	defer func() { r.pool.Put(rt) }()
	var parts []json.RawMessage
	for start := 0; start < len(rows) || start == 0; start += reduceChunk {
		chunk := rows[start:min(start+reduceChunk, len(rows))]
		var keys, values bytes.Buffer
		keys.WriteByte('[')
		values.WriteByte('[')
		for i, row := range chunk {
			if i > 0 {
				keys.WriteByte(',')
				values.WriteByte(',')
			}
			keys.WriteByte('[')
			keys.Write(row.kjson)
			keys.WriteByte(',')
			id, _ := json.Marshal(row.id)
			keys.Write(id)
			keys.WriteByte(']')
			values.Write(row.value)
		}
		keys.WriteByte(']')
		values.WriteByte(']')
		out, err := rt.Reduce(r.src, r.lib, keys.Bytes(), values.Bytes(), false)
		if thrown(err) {
			// CouchDB gives a reduce that throws a null reduction.
			return json.RawMessage("null"), nil
		}
		if err != nil {
			return nil, err
		}
		// The line CouchDB sends its query server: ["reduce",[src],kvs],
		// where kvs is [[[key,id],value],...].
		if err := checkShrinks(len(`["reduce",[],]`)+len(r.src)+keys.Len()+values.Len()+2*len(chunk)-1, r.src, out); err != nil {
			return nil, err
		}
		parts = append(parts, out)
		if len(rows) == 0 {
			break
		}
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return r.rereduceOn(rt, parts)
}

// rereduceJS rereduces reductions with the JavaScript reduce.
func (r *reducer) rereduceJS(parts []json.RawMessage) (json.RawMessage, error) {
	rt, err := r.pool.Get()
	if err != nil {
		return nil, err
	}
	defer func() { r.pool.Put(rt) }()
	return r.rereduceOn(rt, parts)
}

func (r *reducer) rereduceOn(rt *jsfunc.Runtime, parts []json.RawMessage) (json.RawMessage, error) {
	all, _ := json.Marshal(parts)
	out, err := rt.Reduce(r.src, r.lib, nil, all, true)
	if thrown(err) {
		return json.RawMessage("null"), nil
	}
	if err != nil {
		return nil, err
	}
	if err := checkShrinks(len(`["rereduce",[],]`)+len(r.src)+len(all), r.src, out); err != nil {
		return nil, err
	}
	return out, nil
}

// overflowError is CouchDB's reduce_overflow_error: a JavaScript reduce
// whose output does not shrink fast enough (reduce_limit, on by default).
type overflowError struct{ in, out int }

func (e *overflowError) Error() string {
	return fmt.Sprintf("Reduce output must shrink more rapidly: input size: %d output size: %d", e.in, e.out)
}

// checkShrinks applies CouchDB's reduce_limit rule to one call of a
// reduce: the output line ([out]) longer than 4096 characters and more
// than half the input line (the call's line less the function's source)
// is refused. The sizes are of this call's rows, which are not CouchDB's
// B-tree nodes, so the numbers in the reason differ from CouchDB's.
func checkShrinks(line int, src string, out json.RawMessage) error {
	srcJSON, _ := json.Marshal(src)
	in := line - len(src) + len(srcJSON) - len(src)
	if o := len(out) + 2; o > 4096 && o*2 > in {
		return &overflowError{in: in, out: o}
	}
	return nil
}

// thrown reports whether err is a value the function threw, rather than
// the engine stopping it.
func thrown(err error) bool {
	var ce *couchdoc.Error
	return errors.As(err, &ce) && !errors.Is(err, jsfunc.ErrTimeout) && !errors.Is(err, jsfunc.ErrMemory) && !errors.Is(err, jsfunc.ErrClosed)
}
