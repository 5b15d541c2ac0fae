// Package couchdoc holds CouchDB's document model as plain values: documents,
// revision ids, attachments, changes rows, revs_diff answers and CouchDB's
// typed errors. Every layer of Settee speaks these types: the SQLite store,
// the replicator, the HTTP server and client, and the mobile facade. It does
// no I/O.
package couchdoc

import (
	"encoding/json"
	"io"
)

// Doc is one revision of a document.
//
// Body holds the user's fields only, as a compact JSON object: the special
// members (_id, _rev, _deleted, _attachments, _revisions, _conflicts, ...)
// live in the struct's own fields, so no layer has to strip or re-add them.
type Doc struct {
	ID      string
	Rev     string
	Deleted bool
	// Body is a JSON object of the user's fields; nil or empty means {}.
	// Replace it rather than change its bytes in place: a Body from
	// ParseDoc is known valid and ValidBody does not check it again.
	Body json.RawMessage
	// Revisions is the revision history, newest first (_revisions).
	Revisions *Revisions
	// Attachments by name (_attachments).
	Attachments map[string]*Attachment
	// Conflicts and DeletedConflicts are the other non-deleted and deleted
	// leaves; only filled when asked for.
	Conflicts        []string
	DeletedConflicts []string
	// RevsInfo is _revs_info, only filled when asked for.
	RevsInfo []RevInfo
	// LocalSeq is the store's sequence of this document, only when asked for.
	LocalSeq int64

	// parsed is the Body ParseDoc produced, valid and compact.
	parsed []byte
}

// ValidBody returns Body checked and compacted as CompactBody does, with
// no second check of the Body ParseDoc produced, unless it was replaced.
func (d *Doc) ValidBody() ([]byte, error) {
	if len(d.parsed) > 0 && len(d.Body) == len(d.parsed) && &d.Body[0] == &d.parsed[0] {
		return d.Body, nil
	}
	return CompactBody(d.Body)
}

// Revisions is CouchDB's _revisions member: the generation of the newest
// revision and the hashes of the revision and its ancestors, newest first.
type Revisions struct {
	Start int      `json:"start"`
	IDs   []string `json:"ids"`
}

// RevInfo is one entry of _revs_info.
type RevInfo struct {
	Rev    string `json:"rev"`
	Status string `json:"status"` // "available", "missing" or "deleted"
}

// Attachment is one entry of a document's _attachments.
//
// Exactly one of three states holds: a stub (metadata only, the bytes belong
// to an earlier revision), inline Data, or a streamed Body. Body is only
// valid for the duration of the call that handed the document out; readers
// must consume it there, which is what keeps large attachments out of memory.
type Attachment struct {
	Name        string
	ContentType string
	// Digest is CouchDB's "md5-<base64>" digest of the bytes.
	Digest string
	Length int64
	RevPos int
	Stub   bool
	// Data holds the bytes when they travel inline (small attachments).
	Data []byte
	// Body streams the bytes when they do not travel inline.
	Body io.Reader
	// Follows marks an attachment whose bytes follow in a multipart body.
	Follows bool
	// Encoding is how the peer stores the bytes ("gzip" for CouchDB's
	// compressed text attachments, whose Digest is then over the gzip
	// bytes; asked with att_encoding_info=true). Kept for stubs only: bytes
	// travel decoded.
	Encoding string
	// NotDownloaded marks a stub read from a local store that has the
	// attachment's metadata but not its bytes (lazy attachments): a stub
	// even where the bytes were asked for. Never sent on the wire.
	NotDownloaded bool
	// DataDigest is the md5 digest ("md5-<base64>") of the bytes as
	// delivered (decoded), computed by the reader that produced them while
	// checking them (package wire): set with Data, or when Body reaches
	// EOF. A store uses it instead of hashing the bytes a second time. Set
	// it only where the bytes were hashed; whoever changes Data clears it.
	// Never sent on the wire.
	DataDigest string
}

// DocResult is one entry of a _bulk_docs answer.
type DocResult struct {
	ID     string `json:"id"`
	Rev    string `json:"rev,omitempty"`
	OK     bool   `json:"ok,omitempty"`
	Error  string `json:"error,omitempty"`
	Reason string `json:"reason,omitempty"`
	// ReasonJSON is the reason when it is not a JSON string (an object or
	// a number a validate_doc_update threw, which CouchDB answers as it
	// is); Reason then holds its JSON text.
	ReasonJSON json.RawMessage `json:"-"`
	// Existing marks a revision stored as it is (new_edits=false) that the
	// store had already: a success that wrote nothing. Not on the wire.
	Existing bool `json:"-"`
	// err is the error behind Error and Reason when the result was made
	// in this process (FailedResult), kept for its identity.
	err *Error
}

// FailedResult is the result of a document that err refused. Its Err is
// err itself, so errors.Is tells sentinels apart that share a wire name
// (ErrDigestMismatch and ErrBadRequest).
func FailedResult(id string, err *Error) DocResult {
	return DocResult{ID: id, Error: err.Name, Reason: err.Reason, ReasonJSON: err.ReasonJSON, err: err}
}

// MarshalJSON writes the result as CouchDB does: a reason that is not a
// string (ReasonJSON) as it is.
func (r DocResult) MarshalJSON() ([]byte, error) {
	type plain DocResult
	if len(r.ReasonJSON) == 0 {
		return json.Marshal(plain(r))
	}
	p := plain(r)
	p.Reason = ""
	return json.Marshal(struct {
		plain
		Reason json.RawMessage `json:"reason"`
	}{p, r.ReasonJSON})
}

// UnmarshalJSON reads a result whose reason may be any JSON value (a
// validate_doc_update's object): not a string, it is kept in ReasonJSON
// and its text in Reason.
func (r *DocResult) UnmarshalJSON(b []byte) error {
	type plain DocResult
	var aux struct {
		plain
		Reason json.RawMessage `json:"reason"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*r = DocResult(aux.plain)
	r.Reason, r.ReasonJSON = "", nil
	if len(aux.Reason) == 0 || string(aux.Reason) == "null" {
		return nil
	}
	if err := json.Unmarshal(aux.Reason, &r.Reason); err != nil {
		r.Reason, r.ReasonJSON = string(aux.Reason), aux.Reason
	}
	return nil
}

// Err returns the result's error as an *Error, or nil when it succeeded.
func (r DocResult) Err() error {
	if r.Error == "" {
		return nil
	}
	if r.err != nil {
		return r.err
	}
	return FromBody(0, r.Error, r.Reason)
}

// RevsDiffResult is the answer of _revs_diff for one document.
type RevsDiffResult struct {
	Missing           []string `json:"missing"`
	PossibleAncestors []string `json:"possible_ancestors,omitempty"`
}

// Change is one row of a changes feed. Seq is opaque: integers from
// PouchDB, strings such as "34-g1AAAA..." from CouchDB 3. It is never parsed,
// compared or added to, only passed back to the peer that produced it.
type Change struct {
	Seq     json.RawMessage `json:"seq"`
	ID      string          `json:"id"`
	Changes []ChangeRev     `json:"changes"`
	Deleted bool            `json:"deleted,omitempty"`
	Doc     json.RawMessage `json:"doc,omitempty"`
}

// ChangeRev is one revision listed in a changes row.
type ChangeRev struct {
	Rev string `json:"rev"`
}

// Revs returns the revisions listed in the row.
func (c *Change) Revs() []string {
	revs := make([]string, len(c.Changes))
	for i, r := range c.Changes {
		revs[i] = r.Rev
	}
	return revs
}
