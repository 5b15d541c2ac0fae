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

// ReadChanges streams a normal or longpoll changes feed,
// {"results": [row, ...], "last_seq": seq, "pending": n}, decoding one row
// at a time, and returns last_seq (opaque: a JSON number or string). A body
// without last_seq is a *MalformedError; a body cut short gives an error
// matching io.ErrUnexpectedEOF.
func ReadChanges(r io.Reader, fn ChangesFunc) (lastSeq json.RawMessage, err error) {
	lastSeq, _, err = ReadChangesPending(r, fn)
	return lastSeq, err
}

// ReadChangesPending is ReadChanges that also returns the feed's
// "pending", the number of changes after last_seq that CouchDB (and
// settee serve) report; -1 when the body has none or it is not a
// non-negative integer.
func ReadChangesPending(r io.Reader, fn ChangesFunc) (lastSeq json.RawMessage, pending int64, err error) {
	pending = -1
	br := newBounded(r, MaxChangesRow, "changes row")
	dec := json.NewDecoder(br)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, -1, readErr("changes feed", err)
	}
	var errBody ErrorBody
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return nil, -1, readErr("changes feed", err)
		}
		switch key {
		case "results":
			if err := expectDelim(dec, '['); err != nil {
				return nil, -1, readErr("changes feed results", err)
			}
			for dec.More() {
				br.mark()
				c, err := decodeRow(dec)
				if err != nil {
					return nil, -1, err
				}
				if err := fn(c); err != nil {
					return nil, -1, err
				}
			}
			if err := expectDelim(dec, ']'); err != nil {
				return nil, -1, readErr("changes feed results", err)
			}
		case "last_seq":
			if err := dec.Decode(&lastSeq); err != nil {
				return nil, -1, readErr("changes feed last_seq", err)
			}
		case "pending":
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, -1, readErr("changes feed pending", err)
			}
			if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil && v >= 0 {
				pending = v
			}
		case "error":
			if err := dec.Decode(&errBody.Error); err != nil {
				return nil, -1, readErr("changes feed", err)
			}
		case "reason":
			if err := dec.Decode(&errBody.Reason); err != nil {
				return nil, -1, readErr("changes feed", err)
			}
		default:
			br.mark()
			if err := skipValue(dec); err != nil {
				return nil, -1, readErr("changes feed", err)
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, -1, readErr("changes feed", err)
	}
	if errBody.Error != "" {
		return nil, -1, errBody.Err(0)
	}
	if !validSeq(lastSeq) {
		return nil, -1, malformedf("changes feed", "no valid last_seq")
	}
	return lastSeq, pending, nil
}

func decodeRow(dec *json.Decoder) (*couchdoc.Change, error) {
	var c couchdoc.Change
	if err := dec.Decode(&c); err != nil {
		return nil, readErr("changes row", err)
	}
	if err := checkRow(&c); err != nil {
		return nil, err
	}
	return &c, nil
}

func checkRow(c *couchdoc.Change) error {
	if !validSeq(c.Seq) || c.ID == "" {
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
		if err := checkRow(&c); err != nil {
			return lastSeq, err
		}
		if err := fn(&c); err != nil {
			return lastSeq, err
		}
		lastSeq = c.Seq
	}
}
