package query

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"
)

// CouchDB 3.5 names an index created without "name" (and its design doc,
// without "ddoc") by the SHA-1 of the Erlang external term format of
// {Def, lists:usort(Opts)} (mango_idx:gen_name): Def is the request's
// "index" object as jiffy decodes it, Opts the validated request options
// (def, type, name, ddoc, w, partitioned, with their defaults). We encode
// the same term from the request's JSON, member order kept, so an index
// created here or there gets the same design document, and creating it on
// both sides of a replication gives one index, not two.

// genIndexName returns CouchDB's generated name for a create-index request
// body (already checked to be a JSON object with an "index").
func genIndexName(body []byte) (string, error) {
	v, err := decodeOrdered(body)
	if err != nil {
		return "", err
	}
	req, ok := v.(ordObject)
	if !ok {
		return "", fmt.Errorf("request is not an object")
	}
	opts := map[string]any{
		"type": "json", "name": atom("auto_name"), "ddoc": atom("auto_name"),
		"w": json.Number("2"), "partitioned": atom("db_default"),
	}
	var def any
	for _, m := range req {
		switch m.key {
		case "index":
			def = m.val
		case "type", "name", "ddoc", "w", "partitioned":
			opts[m.key] = m.val
		}
	}
	// Atoms sort by name: ddoc, def, name, partitioned, type, w.
	optList := []any{
		etfTuple{atom("ddoc"), opts["ddoc"]},
		etfTuple{atom("def"), def},
		etfTuple{atom("name"), opts["name"]},
		etfTuple{atom("partitioned"), opts["partitioned"]},
		etfTuple{atom("type"), opts["type"]},
		etfTuple{atom("w"), opts["w"]},
	}
	enc := []byte{131}
	enc, err = appendETF(enc, etfTuple{def, etfList(optList)})
	if err != nil {
		return "", err
	}
	sum := sha1.Sum(enc)
	return hex.EncodeToString(sum[:]), nil
}

// ordObject is a JSON object with its members in order, as jiffy keeps
// them.
type ordObject []ordMember

type ordMember struct {
	key string
	val any
}

// atom, etfTuple and etfList are Erlang terms that are not JSON values.
type (
	atom     string
	etfTuple []any
	etfList  []any
)

// decodeOrdered decodes JSON keeping object member order: objects as
// ordObject, arrays as []any, numbers as json.Number.
func decodeOrdered(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	return decodeOrderedValue(dec)
}

func decodeOrderedValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case json.Delim:
		if x == '[' {
			arr := []any{}
			for dec.More() {
				v, err := decodeOrderedValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
		obj := ordObject{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrderedValue(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, ordMember{k.(string), v})
		}
		_, err := dec.Token()
		return obj, err
	default:
		return t, nil
	}
}

// External term format tags (erts/emulator/beam/external.h).
const (
	etfNewFloat   = 70
	etfSmallInt   = 97
	etfInt        = 98
	etfAtom       = 100
	etfSmallTuple = 104
	etfNil        = 106
	etfList_      = 108
	etfBinary     = 109
	etfSmallBig   = 110
)

// appendETF appends the external term format of v as term_to_binary(v,
// [{minor_version, 1}]) gives it on OTP 25 (CouchDB 3.5's): JSON values as
// jiffy decodes them (objects {[{K, V}]}, strings binaries, true, false
// and null atoms, integers and floats).
func appendETF(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return appendAtom(dst, "null"), nil
	case bool:
		if x {
			return appendAtom(dst, "true"), nil
		}
		return appendAtom(dst, "false"), nil
	case atom:
		return appendAtom(dst, string(x)), nil
	case string:
		dst = append(dst, etfBinary)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(x)))
		return append(dst, x...), nil
	case json.Number:
		return appendNumber(dst, string(x))
	case ordObject:
		dst = append(dst, etfSmallTuple, 1)
		items := make([]any, len(x))
		for i, m := range x {
			items[i] = etfTuple{m.key, m.val}
		}
		return appendETF(dst, etfList(items))
	case []any:
		return appendETF(dst, etfList(x))
	case etfList:
		if len(x) == 0 {
			return append(dst, etfNil), nil
		}
		dst = append(dst, etfList_)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(x)))
		for _, e := range x {
			var err error
			if dst, err = appendETF(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, etfNil), nil
	case etfTuple:
		dst = append(dst, etfSmallTuple, byte(len(x)))
		for _, e := range x {
			var err error
			if dst, err = appendETF(dst, e); err != nil {
				return nil, err
			}
		}
		return dst, nil
	}
	return nil, fmt.Errorf("no term for %T", v)
}

func appendAtom(dst []byte, name string) []byte {
	dst = append(dst, etfAtom)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(name)))
	return append(dst, name...)
}

// appendNumber encodes a JSON number as jiffy decodes it: an integer when
// it has no fraction or exponent, else a float.
func appendNumber(dst []byte, s string) ([]byte, error) {
	if strings.ContainsAny(s, ".eE") {
		f, err := json.Number(s).Float64()
		if err != nil {
			return nil, err
		}
		dst = append(dst, etfNewFloat)
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(f)), nil
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, fmt.Errorf("bad integer %q", s)
	}
	switch {
	case n.Sign() >= 0 && n.Cmp(big.NewInt(255)) <= 0:
		return append(dst, etfSmallInt, byte(n.Int64())), nil
	case n.IsInt64() && n.Int64() >= math.MinInt32 && n.Int64() <= math.MaxInt32:
		return binary.BigEndian.AppendUint32(append(dst, etfInt), uint32(int32(n.Int64()))), nil
	}
	mag := n.Bytes() // big-endian magnitude
	if len(mag) > 255 {
		return nil, fmt.Errorf("integer %q too large", s)
	}
	sign := byte(0)
	if n.Sign() < 0 {
		sign = 1
	}
	dst = append(dst, etfSmallBig, byte(len(mag)), sign)
	for i := len(mag) - 1; i >= 0; i-- {
		dst = append(dst, mag[i])
	}
	return dst, nil
}
