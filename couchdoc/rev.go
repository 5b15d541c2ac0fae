package couchdoc

import (
	"crypto/md5"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FormatRev joins a generation and a hash into a revision id.
func FormatRev(gen int, hash string) string {
	return strconv.Itoa(gen) + "-" + hash
}

// ValidateDocID checks a document id the way CouchDB does
// (couch_doc:validate_docid): non-empty, valid UTF-8, and starting with '_'
// only for _design/ and _local/ ids with a name. Every refusal is an
// ErrIllegalDocID with CouchDB's reason.
func ValidateDocID(id string) error {
	switch {
	case id == "":
		return Errorf(ErrIllegalDocID, "Document id must not be empty")
	case id == DesignPrefix || id == LocalPrefix:
		return Errorf(ErrIllegalDocID, "Illegal document id `%s`", id)
	case !utf8.ValidString(id):
		return Errorf(ErrIllegalDocID, "Document id must be valid UTF-8")
	case id[0] == '_' && !strings.HasPrefix(id, DesignPrefix) && !strings.HasPrefix(id, LocalPrefix):
		return Errorf(ErrIllegalDocID, "Only reserved document ids may start with underscore.")
	}
	return nil
}

// Id prefixes with special meaning.
const (
	DesignPrefix = "_design/"
	LocalPrefix  = "_local/"
)

// IsLocalID reports whether id names a local (never replicated) document.
func IsLocalID(id string) bool { return strings.HasPrefix(id, LocalPrefix) }

// NewRevHash computes the hash of a new revision deterministically, so two
// devices making the identical edit produce the identical revision: md5 of
// the deleted flag, the parent revision, the canonical body and the
// attachments' names and digests.
func NewRevHash(deleted bool, parentRev string, canonicalBody []byte, atts map[string]*Attachment) string {
	h := md5.New()
	if deleted {
		h.Write([]byte{1})
	} else {
		h.Write([]byte{0})
	}
	h.Write([]byte(parentRev))
	h.Write([]byte{0})
	h.Write(canonicalBody)
	h.Write([]byte{0})
	names := make([]string, 0, len(atts))
	for name := range atts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		h.Write([]byte(name))
		h.Write([]byte{0})
		h.Write([]byte(atts[name].Digest))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ValidateRevisions checks that a document's _revisions agrees with its
// _rev: the start is the rev's generation, the first id its id, and the
// history reaches no lower than generation 0. It puts every id in the form CouchDB keeps it (CanonRevID); a
// 32-byte id that is not hexadecimal is ErrDocValidation, as in CouchDB.
func ValidateRevisions(rev string, r *Revisions) error {
	gen, hash, err := ParseRev(rev)
	if err != nil {
		return err
	}
	if r == nil {
		return nil
	}
	if err := CanonRevisions(r); err != nil {
		return err
	}
	if len(r.IDs) == 0 || r.Start != gen || r.IDs[0] != hash {
		return Errorf(ErrBadRequest, "_revisions does not match _rev %q", rev)
	}
	if len(r.IDs) > r.Start+1 { // the oldest would be below generation 0
		return Errorf(ErrBadRequest, "_revisions lists more ids than its start %d allows", r.Start)
	}
	return nil
}

// CanonRevisions puts every id of r in the form CouchDB keeps it
// (CanonRevID). A 32-byte id that is not hexadecimal is ErrDocValidation
// "RevId isn't a valid hexadecimal", CouchDB's answer.
func CanonRevisions(r *Revisions) error {
	for i, id := range r.IDs {
		c, ok := CanonRevID(id)
		if !ok {
			return Errorf(ErrDocValidation, "RevId isn't a valid hexadecimal")
		}
		r.IDs[i] = c
	}
	return nil
}

// History expands a _revisions member into revision ids, newest first.
func (r *Revisions) History() []string {
	revs := make([]string, len(r.IDs))
	for i, id := range r.IDs {
		revs[i] = FormatRev(r.Start-i, id)
	}
	return revs
}
