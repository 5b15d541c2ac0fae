package localdb

import (
	"fmt"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/attachstore"
)

// attWriter is a document write's attachment part: it turns a document's
// attachments into stored ones, looking stubs up among the revisions
// stored before and storing bytes, inline or staged before the
// transaction (attach_stage.go).
type attWriter struct {
	t *wtx
	// staged holds the attachment bodies streamed in before the batch.
	staged map[*couchdoc.Attachment]*attachstore.Staged
	// lazy lets replicated stubs the store lacks be recorded as missing
	// (BulkDocsLazy).
	lazy bool
}

// resolve turns a document's attachments into stored ones: stubs are
// looked up in candidates (nearest first: for a local edit the parent
// revision, for a replicated one the stored ancestors), and bytes are
// stored. revpos of new bytes is gen unless replicated with its own.
func (aw *attWriter) resolve(docID string, atts map[string]*couchdoc.Attachment, candidates []map[string]*storedAtt, gen int, replicated bool) ([]*storedAtt, error) {
	if len(atts) == 0 {
		return nil, nil
	}
	out := make([]*storedAtt, 0, len(atts))
	// Stubs first, so a missing stub fails before any byte is stored.
	for name, a := range atts {
		if !a.Stub {
			if a.Data == nil && a.Body == nil {
				return nil, couchdoc.Errorf(couchdoc.ErrBadRequest, "attachment %q has no data", name)
			}
			continue
		}
		// By name, nearest candidate first, as CouchDB's merge_stubs. A
		// replicated stub newer (revpos) than what we hold is not ours.
		var found *storedAtt
		for _, c := range candidates {
			if s := c[name]; s != nil && (!replicated || a.RevPos <= s.RevPos) {
				found = s
				break
			}
		}
		if found == nil && replicated && a.Digest != "" {
			// Any revision holding the same content under that name.
			for _, c := range candidates {
				for _, s := range c {
					if s.Digest == a.Digest {
						found = &storedAtt{Name: name, ContentType: s.ContentType, Digest: s.Digest, Length: s.Length, RevPos: s.RevPos,
							Encoding: s.Encoding, Missing: s.Missing}
						break
					}
				}
			}
		}
		if found == nil && replicated && aw.lazy && a.Digest != "" {
			var err error
			if found, err = aw.t.absentAtt(name, a); err != nil {
				return nil, err
			}
		}
		if found == nil {
			return nil, couchdoc.Errorf(couchdoc.ErrMissingStub, "Invalid attachment stub in %s for %s", docID, name)
		}
		sa := *found
		sa.Name = name
		if replicated && a.RevPos > 0 {
			sa.RevPos = a.RevPos
		}
		out = append(out, &sa)
	}
	for name, a := range atts {
		if a.Stub {
			continue
		}
		wantLen := int64(-1)
		if a.Body != nil && a.Length > 0 {
			wantLen = a.Length
		}
		d, n, err := aw.writeContent(a, wantLen, !replicated)
		if err != nil {
			return nil, err
		}
		ct := a.ContentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		rp := gen
		if replicated && a.RevPos > 0 {
			rp = a.RevPos
		}
		out = append(out, &storedAtt{Name: name, ContentType: ct, Digest: d, Length: n, RevPos: rp})
	}
	return out, nil
}

// writeContent stores an attachment's bytes once per digest and returns
// the digest and length: inline bytes as they are, a streamed body as it
// was staged (DB.stage) before the transaction. A stated digest or length
// (wantLen >= 0) that does not match gives ErrDigestMismatch and no content
// is kept; strict is set for local edits, as replicated writes tolerate a
// digest mismatch (see attachstore.CheckDigest).
func (aw *attWriter) writeContent(a *couchdoc.Attachment, wantLen int64, strict bool) (string, int64, error) {
	if a.Body == nil {
		return attachstore.WriteData(aw.t, a, wantLen, strict)
	}
	s := aw.staged[a]
	if s == nil {
		return "", 0, fmt.Errorf("localdb: attachment %q body was not staged", a.Name)
	}
	return attachstore.UseStaged(aw.t, a, s, wantLen, strict)
}
