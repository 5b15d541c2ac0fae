package jsfunc

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/settee/settee/couchdoc"
)

// A validate_doc_update that reads a few members of a large document pays
// for the engine's parse of all of it. When the function's own text shows
// every use of its newDoc parameter (or another) to be a read or write of
// a named member (newDoc.type), only those members are sent: the function
// cannot tell. sandbox.js then gives the sent object a prototype whose
// accessors catch a named member the document lacks, and asks for the
// whole document when Object.prototype has that name (a getter there would
// see the object itself); the call is then made again with everything.

// protoNames are Object.prototype's own properties in QuickJS: reading one
// of them through the document reaches a function that can see the object
// (newDoc.hasOwnProperty), so a function naming one is sent everything.
var protoNames = map[string]bool{
	"constructor": true, "__proto__": true, "toString": true, "toLocaleString": true,
	"valueOf": true, "hasOwnProperty": true, "isPrototypeOf": true, "propertyIsEnumerable": true,
	"__defineGetter__": true, "__defineSetter__": true, "__lookupGetter__": true, "__lookupSetter__": true,
}

// membersRead returns, for each of a function's four parameters (newDoc,
// oldDoc, userCtx, secObj), the names of the members its text can reach through
// it, or nil when it may reach the object itself. fn is the function's
// text as the engine keeps it. Anything the scan does not understand
// (comments or escapes around a use, computed members, the parameter
// passed, compared or returned) is a use of the object itself.
func membersRead(fn string) [4][]string {
	var out [4][]string
	params, body, ok := splitFunction(fn)
	if !ok || strings.Contains(body, `\u`) || hasWord(body, "arguments") || hasWord(body, "eval") {
		return out
	}
	for i := 0; i < 4 && i < len(params); i++ {
		dup := false
		for j, p := range params {
			dup = dup || (j != i && p == params[i])
		}
		if !dup {
			out[i] = namesAfter(body, params[i])
		}
	}
	return out
}

// mapMembers returns the members of the document that map functions
// (their texts) use, _id always among them (a failing function's log line
// names it), or nil when one of them may use the whole document or runs
// strict code: the document is frozen, and a strict assignment to a
// member it lacks would throw where the cut one's accessor cannot.
func mapMembers(texts []string) []string {
	names := []string{"_id"}
	for _, t := range texts {
		if strings.Contains(t, "use strict") || hasWord(t, "class") {
			return nil
		}
		m := membersRead(t)[0]
		if m == nil {
			return nil
		}
		for _, n := range m {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}

// splitFunction splits `function name(a, b) { body }` into its parameter
// names and the text from its body's brace on; ok is false for any other
// form (arrow functions, defaults, destructuring, comments in the head).
func splitFunction(fn string) (params []string, body string, ok bool) {
	s, found := strings.CutPrefix(fn, "function")
	if !found {
		return nil, "", false
	}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		return nil, "", false
	}
	if name := strings.TrimSpace(s[:open]); name != "" && !isIdent(name) {
		return nil, "", false
	}
	end := strings.IndexByte(s[open:], ')')
	if end < 0 {
		return nil, "", false
	}
	list, rest := s[open+1:open+end], strings.TrimLeft(s[open+end+1:], " \t\r\n")
	if !strings.HasPrefix(rest, "{") {
		return nil, "", false
	}
	if strings.TrimSpace(list) != "" {
		for _, p := range strings.Split(list, ",") {
			p = strings.TrimSpace(p)
			if !isIdent(p) {
				return nil, "", false
			}
			params = append(params, p)
		}
	}
	return params, rest, true
}

// namesAfter returns the member names that follow every occurrence of the
// word param in body (param.name), or nil when one occurrence is anything
// else or names a member of Object.prototype.
func namesAfter(body, param string) []string {
	names := []string{}
	for i := 0; ; {
		at := wordAt(body, param, i)
		if at < 0 {
			return names
		}
		i = at + len(param)
		j := skipSpace(body, i)
		if j == len(body) || body[j] != '.' {
			if testOnly(body, at, j) {
				continue
			}
			return nil
		}
		j = skipSpace(body, j+1)
		n := j
		for n < len(body) && isWordByte(body[n]) {
			n++
		}
		name := body[j:n]
		if !isIdent(name) || protoNames[name] {
			return nil
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		i = n
	}
}

// testOnly reports whether the parameter at body[at:] (next: the first
// non-space byte after it) is only tested, in a way that runs no code of
// the object's and yields no reference to it: !p, typeof p, if (p) or
// while (p), and p as the left operand of &&, === or !==, or of == or !=
// with null or undefined. Validators test oldDoc so (oldDoc && ...,
// !oldDoc) before they read its members.
func testOnly(body string, at, next int) bool {
	p := at - 1
	for p >= 0 && (body[p] == ' ' || body[p] == '\t' || body[p] == '\n' || body[p] == '\r') {
		p--
	}
	rest := body[next:]
	// What follows must not reach into the object: p[k], p(...), p`...`,
	// p?.k.
	reaches := strings.HasPrefix(rest, "[") || strings.HasPrefix(rest, "(") ||
		strings.HasPrefix(rest, "`") || strings.HasPrefix(rest, "?.")
	switch {
	case p >= 0 && body[p] == '!':
		return !reaches
	case wordBefore(body, p+1) == "typeof":
		return !reaches
	case p >= 0 && body[p] == '(' && strings.HasPrefix(rest, ")"):
		w := wordBefore(body, p)
		return w == "if" || w == "while"
	}
	if !operandStart(body, p) {
		return false
	}
	switch {
	case strings.HasPrefix(rest, "&&"):
		return !strings.HasPrefix(rest, "&&=")
	case strings.HasPrefix(rest, "==="), strings.HasPrefix(rest, "!=="):
		return true
	case strings.HasPrefix(rest, "=="), strings.HasPrefix(rest, "!="):
		// Loose equality with null or undefined converts nothing; the
		// literal must end the comparison (p == null + 1 compares with 1).
		r := rest[skipSpace(rest, 2):]
		for _, lit := range []string{"null", "undefined"} {
			if after, ok := strings.CutPrefix(r, lit); ok && (after == "" || !isWordByte(after[0])) {
				after = after[skipSpace(after, 0):]
				for _, end := range []string{")", ";", "&&", "||", "?", ",", "}", ":"} {
					if strings.HasPrefix(after, end) {
						return true
					}
				}
			}
		}
	}
	return false
}

// operandStart reports whether body[p] (the last non-space byte before an
// operand, p < 0 at the start) leaves the operand to the operator after
// it: an opening bracket or separator, &&, ||, a plain assignment or
// return, not an operator that would take it first (x + p && y).
func operandStart(body string, p int) bool {
	if p < 0 {
		return true
	}
	switch c := body[p]; c {
	case '(', ',', ';', '{', '}', '?', ':':
		return true
	case '&', '|':
		return p > 0 && body[p-1] == c
	case '=':
		return p == 0 || !strings.ContainsRune("=!<>+-*/%&|^", rune(body[p-1]))
	}
	return wordBefore(body, p+1) == "return"
}

// wordBefore returns the word ending just before body[end], spaces
// skipped.
func wordBefore(body string, end int) string {
	e := end
	for e > 0 && (body[e-1] == ' ' || body[e-1] == '\t' || body[e-1] == '\n' || body[e-1] == '\r') {
		e--
	}
	b := e
	for b > 0 && isWordByte(body[b-1]) {
		b--
	}
	if b > 0 && body[b-1] == '.' {
		return "" // a member named so
	}
	return body[b:e]
}

// isWordByte reports whether b can be part of a JavaScript identifier as
// the scan reads it: non-ASCII bytes and backslashes count, so that a
// longer or escaped name is never taken for the parameter.
func isWordByte(b byte) bool {
	return b == '_' || b == '$' || b == '\\' || b >= 0x80 ||
		('a' <= b && b <= 'z') || ('A' <= b && b <= 'Z') || ('0' <= b && b <= '9')
}

// isIdent reports whether s is a plain ASCII identifier.
func isIdent(s string) bool {
	if s == "" || ('0' <= s[0] && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; b == '\\' || b >= 0x80 || !isWordByte(b) {
			return false
		}
	}
	return true
}

func hasWord(s, w string) bool { return wordAt(s, w, 0) >= 0 }

// wordAt returns the index of the first occurrence of the word w in s at
// or after from, not part of a longer word (isWordByte), or -1.
func wordAt(s, w string, from int) int {
	for i := from; ; {
		k := strings.Index(s[i:], w)
		if k < 0 {
			return -1
		}
		at := i + k
		i = at + len(w)
		if (at == 0 || !isWordByte(s[at-1])) && (i == len(s) || !isWordByte(s[i])) {
			return at
		}
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// appendMembers appends the JSON object of doc's top-level members whose
// names are in names, in their order in doc (a name given twice is copied
// twice: the engine keeps the last, as it would). doc is JSON Settee made
// (a stored body, a document it encoded); ok is false when it is not an
// object, and dst is then unchanged.
func appendMembers(dst []byte, doc []byte, names []string) ([]byte, bool) {
	start := len(dst)
	dst = append(dst, '{')
	first := true
	ok := couchdoc.EachMember(doc, func(key, value []byte) bool {
		if wanted(key, names) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(append(append(dst, key...), ':'), value...)
		}
		return true
	})
	if !ok {
		return dst[:start], false
	}
	return append(dst, '}'), true
}

// cutElements is the JSON array docs with each element cut to names by
// appendMembers; ok is false when docs is not an array of objects.
func cutElements(docs []byte, names []string) ([]byte, bool) {
	out := make([]byte, 0, 64)
	out = append(out, '[')
	n := 0
	ok := couchdoc.EachElement(docs, func(v []byte) bool {
		if n > 0 {
			out = append(out, ',')
		}
		n++
		var cut bool
		out, cut = appendMembers(out, v, names)
		return cut
	})
	if !ok {
		return nil, false
	}
	return append(out, ']'), true
}

// wanted reports whether the JSON string key (quotes included) is one of
// names; a key with escapes or non-ASCII bytes is decoded first (invalid
// UTF-8 reads as U+FFFD, as the engine reads it).
func wanted(key []byte, names []string) bool {
	raw := key[1 : len(key)-1]
	plain := true
	for _, c := range raw {
		plain = plain && c != '\\' && c < utf8.RuneSelf
	}
	if plain {
		for _, n := range names {
			if string(raw) == n {
				return true
			}
		}
		return false
	}
	var s string
	if err := json.Unmarshal(key, &s); err != nil {
		return true
	}
	return slices.Contains(names, s)
}
