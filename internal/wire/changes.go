package wire

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"

	"github.com/settee/settee/couchdoc"
)

// ChangesFunc receives one changes row. The row is not reused; an error
// stops the feed and is returned as is.
type ChangesFunc func(*couchdoc.Change) error

// ReadChangesPending streams a normal or longpoll changes feed,
// {"results": [row, ...], "last_seq": seq, "pending": n}, decoding one row
// at a time, and returns last_seq (opaque: a JSON number or string) and
// "pending", the number of changes after last_seq that CouchDB (and settee
// serve) report; -1 when the body has none or it is not a non-negative
// integer. A body without last_seq is a *MalformedError; a body cut short
// gives an error matching io.ErrUnexpectedEOF.
//
// The feed is read with jsonStream, as _bulk_get answers are: each row's
// members are checked as they are decoded, but a row's "doc" is handed
// out as received, not validated, because its reader parses it
// (couchdoc.ParseDoc), so the document's bytes are scanned once here and
// checked once there. A json.Decoder scanned every row twice (finding its
// end, then decoding it) before the document was parsed, a large share of
// a pull's CPU with include_docs=true (BenchmarkReadChangesDocs).
func ReadChangesPending(r io.Reader, fn ChangesFunc) (lastSeq json.RawMessage, pending int64, err error) {
	return readChangesFeed(r, false, fn)
}

// ReadChangesSparse is ReadChangesPending for a normal feed asked with
// seq_interval: CouchDB then computes a row's seq only every that many
// rows (a clustered seq costs it a fifth of the feed's CPU) and sends
// "seq": null on the others, which are handed out with a nil Seq; the
// feed's last_seq is still required.
func ReadChangesSparse(r io.Reader, fn ChangesFunc) (lastSeq json.RawMessage, pending int64, err error) {
	return readChangesFeed(r, true, fn)
}

func readChangesFeed(r io.Reader, sparse bool, fn ChangesFunc) (lastSeq json.RawMessage, pending int64, err error) {
	pending = -1
	br := newBounded(r, MaxChangesRow, "changes row")
	s := newJSONStream(br)
	if err := s.expect("changes feed", '{'); err != nil {
		return nil, -1, err
	}
	var errBody ErrorBody
	var raw []byte // reused for the members decoded here
	for first := true; ; first = false {
		more, err := s.more("changes feed", '}', first)
		if err != nil {
			return nil, -1, err
		}
		if !more {
			break
		}
		key, err := s.readKey("changes feed")
		if err != nil {
			return nil, -1, err
		}
		switch string(key) {
		case "results":
			if err := s.expect("changes feed results", '['); err != nil {
				return nil, -1, err
			}
			for first := true; ; first = false {
				more, err := s.more("changes feed results", ']', first)
				if err != nil {
					return nil, -1, err
				}
				if !more {
					break
				}
				br.mark()
				var c *couchdoc.Change
				if c, raw, err = readChangeRow(s, raw, sparse); err != nil {
					return nil, -1, err
				}
				if err := fn(c); err != nil {
					return nil, -1, err
				}
			}
		case "last_seq":
			if raw, err = readMember(s, "changes feed last_seq", raw, nil); err != nil {
				return nil, -1, err
			}
			lastSeq = append(json.RawMessage(nil), raw...)
		case "pending":
			if raw, err = readMember(s, "changes feed pending", raw, nil); err != nil {
				return nil, -1, err
			}
			if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil && v >= 0 {
				pending = v
			}
		case "error":
			if raw, err = readMember(s, "changes feed", raw, &errBody.Error); err != nil {
				return nil, -1, err
			}
		case "reason":
			if raw, err = readMember(s, "changes feed", raw, &errBody.Reason); err != nil {
				return nil, -1, err
			}
		default:
			br.mark()
			if err := s.skipValue("changes feed"); err != nil {
				return nil, -1, err
			}
		}
	}
	if errBody.Error != "" {
		return nil, -1, errBody.Err(0)
	}
	if !validSeq(lastSeq) {
		return nil, -1, malformedf("changes feed", "no valid last_seq")
	}
	return lastSeq, pending, nil
}

// readMember reads the next value into raw (reused) and checks it: decoded
// into v when v is not nil, else only validated.
func readMember(s *jsonStream, what string, raw []byte, v any) ([]byte, error) {
	raw, err := s.readValue(what, raw[:0])
	if err != nil {
		return raw, err
	}
	if v == nil {
		if !json.Valid(raw) {
			return raw, malformedf(what, "invalid JSON value")
		}
		return raw, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return raw, malformed(what, err)
	}
	return raw, nil
}

// readChangeRow reads one row of a normal feed. Its Doc is not validated
// (see ReadChangesPending); the rest is checked as a json.Decoder would.
// With sparse, a null or absent seq is a nil Seq.
func readChangeRow(s *jsonStream, raw []byte, sparse bool) (*couchdoc.Change, []byte, error) {
	const what = "changes row"
	if err := s.expect(what, '{'); err != nil {
		return nil, raw, err
	}
	c := &couchdoc.Change{}
	for first := true; ; first = false {
		more, err := s.more(what, '}', first)
		if err != nil {
			return nil, raw, err
		}
		if !more {
			break
		}
		key, err := s.readKey(what)
		if err != nil {
			return nil, raw, err
		}
		switch string(key) {
		case "seq":
			raw, err = readMember(s, what, raw, nil)
			c.Seq = append(json.RawMessage(nil), raw...)
		case "id":
			c.ID = "" // a repeated member replaces the last, as in encoding/json
			raw, err = readPlain(s, what, raw, plainJSONString, &c.ID)
		case "changes":
			c.Changes = nil
			raw, err = readPlain(s, what, raw, plainChanges, &c.Changes)
		case "deleted":
			raw, err = readMember(s, what, raw, &c.Deleted)
		case "doc":
			// Its own slice: the row is handed out and kept.
			var doc []byte
			doc, err = s.readValue(what, nil)
			c.Doc = doc
		default:
			err = s.skipValue(what)
		}
		if err != nil {
			return nil, raw, err
		}
	}
	if sparse && (len(c.Seq) == 0 || string(c.Seq) == "null") {
		c.Seq = nil
	}
	if err := checkRow(c, sparse); err != nil {
		return nil, raw, err
	}
	return c, raw, nil
}

// readPlain reads the next value into raw (reused) and decodes it into v:
// with plain when it can, else with encoding/json.
func readPlain[T any](s *jsonStream, what string, raw []byte, plain func([]byte) (T, bool), v *T) ([]byte, error) {
	raw, err := s.readValue(what, raw[:0])
	if err != nil {
		return raw, err
	}
	if p, ok := plain(raw); ok {
		*v = p
		return raw, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return raw, malformed(what, err)
	}
	return raw, nil
}

// checkRow checks a row has an id, non-empty revs and a seq; with sparse
// (a feed asked with seq_interval), a nil Seq is allowed.
func checkRow(c *couchdoc.Change, sparse bool) error {
	if !(sparse && c.Seq == nil) && !validSeq(c.Seq) || c.ID == "" {
		return malformedf("changes row", "row without seq or id")
	}
	for _, r := range c.Changes {
		if r.Rev == "" {
			return malformedf("changes row", "row %q lists an empty rev", c.ID)
		}
	}
	return nil
}

// validSeq accepts what peers use as sequences: numbers, strings and (old
// BigCouch) arrays; not null, objects or booleans.
func validSeq(s json.RawMessage) bool {
	s = bytes.TrimSpace(s)
	if len(s) == 0 {
		return false
	}
	switch c := s[0]; {
	case c == '"', c == '[', c == '-', '0' <= c && c <= '9':
		return true
	}
	return false
}

// continuousLine is a line of a continuous feed: a row, the final
// {"last_seq": ...} or an error.
type continuousLine struct {
	couchdoc.Change
	LastSeq json.RawMessage `json:"last_seq"`
	Error   string          `json:"error"`
	Reason  string          `json:"reason"`
}

// ReadContinuousChanges streams a continuous changes feed: one JSON object
// per line, empty lines as heartbeats, and a final {"last_seq": seq} line
// (sent when the feed's timeout ends it). It returns that last_seq. When
// the stream ends without it, it returns the seq of the last row read and an
// error matching io.ErrUnexpectedEOF, so the caller can resume from there.
func ReadContinuousChanges(r io.Reader, fn ChangesFunc) (lastSeq json.RawMessage, err error) {
	br := newBounded(r, MaxChangesRow, "changes row")
	dec := json.NewDecoder(br)
	for {
		br.mark()
		var l continuousLine
		if err := dec.Decode(&l); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return lastSeq, readErr("continuous changes feed", err)
		}
		switch {
		case l.Error != "":
			return lastSeq, ErrorBody{Error: l.Error, Reason: l.Reason}.Err(0)
		case l.LastSeq != nil && l.ID == "":
			if !validSeq(l.LastSeq) {
				return lastSeq, malformedf("continuous changes feed", "bad last_seq %s", l.LastSeq)
			}
			return l.LastSeq, nil
		}
		c := l.Change
		if err := checkRow(&c, false); err != nil {
			return lastSeq, err
		}
		if err := fn(&c); err != nil {
			return lastSeq, err
		}
		lastSeq = c.Seq
	}
}

// A feed's rows are read one member at a time; encoding/json (reflection,
// a validating scan, a decodeState per call) cost more than the rest of a
// row without a document. plainJSONString and plainChanges decode the
// shapes every peer sends, "id" and "changes" of printable ASCII without
// escapes, exactly as encoding/json would; anything else goes to it.

// plainJSONString returns the string raw encodes when raw is a JSON string
// without escapes or non-ASCII bytes (couchdoc.IsPlainString).
func plainJSONString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if !couchdoc.IsPlainString(body) {
		return "", false
	}
	return string(body), true
}

// plainChanges decodes a "changes" array of {"rev": plain string} objects.
func plainChanges(raw []byte) ([]couchdoc.ChangeRev, bool) {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	revs := make([]couchdoc.ChangeRev, 0, 1)
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return revs, skipWS(raw, i+1) == len(raw)
	}
	for {
		var ok bool
		var rev string
		if i, ok = expectByte(raw, i, '{'); !ok {
			return nil, false
		}
		const key = `"rev"`
		if i+len(key) > len(raw) || string(raw[i:i+len(key)]) != key {
			return nil, false
		}
		if i, ok = expectByte(raw, i+len(key), ':'); !ok {
			return nil, false
		}
		end := i
		if end < len(raw) && raw[end] == '"' {
			end++
			for end < len(raw) && raw[end] != '"' {
				end++
			}
			end++
		}
		if end > len(raw) {
			return nil, false
		}
		if rev, ok = plainJSONString(raw[i:end]); !ok {
			return nil, false
		}
		revs = append(revs, couchdoc.ChangeRev{Rev: rev})
		if i, ok = expectByte(raw, end, '}'); !ok {
			return nil, false
		}
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
			continue
		}
		if i, ok = expectByte(raw, i, ']'); !ok {
			return nil, false
		}
		return revs, i == len(raw)
	}
}

// expectByte skips white space before and after c at raw[i:]; it returns
// where the next token starts.
func expectByte(raw []byte, i int, c byte) (int, bool) {
	i = skipWS(raw, i)
	if i >= len(raw) || raw[i] != c {
		return i, false
	}
	return skipWS(raw, i+1), true
}

func skipWS(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}
