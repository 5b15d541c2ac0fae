package scheduler

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
)

// Member is one member of a JSON object, in its place.
type Member struct {
	Key   string
	Value json.RawMessage // nil deletes the member (SetMembers)
}

// members returns an object's members in their order; false when body
// is not a JSON object.
func members(body []byte) ([]Member, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []Member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, Member{k, v})
	}
	return out, true
}

func encodeMembers(ms []Member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, m := range ms {
		if m.Value == nil {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.Write(jsonString(m.Key))
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// jsonString encodes s as JSON without escaping HTML characters, so that
// a member kept as it was keeps its bytes.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// SetMembers returns a JSON object with each member set, in its place
// when the object has it (as CouchDB's lists:keystore), after the others
// when not; a member with a nil Value is removed. A body that is not an
// object is taken as {}.
func SetMembers(body []byte, set ...Member) []byte {
	ms, ok := members(body)
	if !ok {
		ms = nil
	}
	for _, s := range set {
		found := false
		for i := range ms {
			if ms[i].Key == s.Key {
				ms[i].Value, found = s.Value, true
			}
		}
		if !found && s.Value != nil {
			ms = append(ms, s)
		}
	}
	return encodeMembers(ms)
}

// StripCredentials returns a replication document's body without the
// credentials of its endpoints, as CouchDB shows a document to a user who
// is neither an admin nor its owner (couch_replicator_docs:after_doc_read):
// an endpoint object loses its auth and headers, a URL its user info
// (CouchDB strips that from URL strings only; here from an object's url
// too, so that no form of a password is shown). Members keep their order.
func StripCredentials(body []byte) []byte {
	ms, ok := members(body)
	if !ok {
		return body
	}
	changedAny := false
	for i, m := range ms {
		if m.Key != "source" && m.Key != "target" {
			continue
		}
		var s string
		if json.Unmarshal(m.Value, &s) == nil {
			if u := withoutUserinfo(s); u != s {
				ms[i].Value, changedAny = jsonString(u), true
			}
			continue
		}
		obj, ok := members(m.Value)
		if !ok {
			continue
		}
		changed := false
		for j, f := range obj {
			switch f.Key {
			case "auth", "headers":
				obj[j].Value, changed = nil, true
			case "url":
				if json.Unmarshal(f.Value, &s) == nil && withoutUserinfo(s) != s {
					obj[j].Value, changed = jsonString(withoutUserinfo(s)), true
				}
			}
		}
		if changed {
			ms[i].Value, changedAny = encodeMembers(obj), true
		}
	}
	if !changedAny {
		return body
	}
	return encodeMembers(ms)
}

// userinfoURL is CouchDB's pattern of a URL with a password, the
// fallback for a URL that url.Parse refuses.
var userinfoURL = regexp.MustCompile(`^(https?://)[^:]+:[^@]+@(.*)$`)

func withoutUserinfo(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return userinfoURL.ReplaceAllString(s, "$1$2")
	}
	if u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}
