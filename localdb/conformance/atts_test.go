package conformance_test

import (
	"crypto/md5"
	"encoding/base64"
	"errors"
	"net/http"

	"github.com/settee/settee/couchdoc"
)

var attNames = []string{"a.txt", "b.bin", "c d/é"}

var attTypes = []string{"text/plain", "application/octet-stream", "image/png"}

// childAtts returns a child revision's attachments: the parent's (same
// content and revpos), sometimes with one added or replaced by new content
// of revpos gen, sometimes with one dropped.
func (h *harness) childAtts(parent map[string]*attModel, gen int) map[string]*attModel {
	out := map[string]*attModel{}
	for name, a := range parent {
		out[name] = a
	}
	switch r := h.rng.Intn(10); {
	case r < 2:
		data := make([]byte, 1+h.rng.Intn(300))
		h.rng.Read(data)
		sum := md5.Sum(data)
		out[pick(h, attNames)] = &attModel{ctype: pick(h, attTypes), data: data, digest: "md5-" + base64.StdEncoding.EncodeToString(sum[:]), revpos: gen}
	case r < 3 && len(out) > 0:
		delete(out, pick(h, sortedKeys(mapKeys(out))))
	}
	return out
}

func mapKeys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func setAtt(m map[string]*couchdoc.Attachment, a *couchdoc.Attachment) map[string]*couchdoc.Attachment {
	if m == nil {
		m = map[string]*couchdoc.Attachment{}
	}
	m[a.Name] = a
	return m
}

// missingStub sends an edit of a leaf with a stub the leaf does not have:
// CouchDB refuses it with 412 missing_stub (couch_doc merge_stubs) and
// nothing changes; pouchdb-server answers the same.
func (h *harness) missingStub(m *docModel, parent string, d *couchdoc.Doc) {
	sum := md5.Sum([]byte(h.randHash()))
	d.Attachments = setAtt(d.Attachments, &couchdoc.Attachment{Name: "no such attachment", ContentType: "text/plain", Digest: "md5-" + base64.StdEncoding.EncodeToString(sum[:]), Length: 3, RevPos: 1, Stub: true})
	rev, err := h.db.Put(h.ctx, d)
	m.logf("op %d: local Put rev=%q with a stub the leaf lacks -> %q, %v", h.op, parent, rev, err)
	if !errors.Is(err, couchdoc.ErrMissingStub) {
		h.fail(m, "localdb Put naming leaf %s with a stub it lacks: rev %q, err %v; CouchDB answers 412 missing_stub", parent, rev, err)
	}
	h.flushPouchOf(m)
	if _, st := h.pouchEdit(m, d, false); st != http.StatusPreconditionFailed {
		h.fail(m, "pouchdb-server PUT with a stub the leaf lacks: status %d, want 412", st)
	}
}
