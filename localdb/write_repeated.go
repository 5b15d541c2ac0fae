package localdb

import (
	"github.com/settee/settee/couchdoc"
)

// A new_edits=false batch that names a document more than once (the
// leaves of a conflicted document, as a replicator sends them) merges all
// its revisions into the tree and saves the document once, at the batch's
// last entry naming it, as CouchDB's updater groups a batch's updates of
// one document: the tree is stemmed once, after the merges, and the
// document gets one new sequence (testdata/couchdb35-extra/bulkdocs.jsonl).
// Saving after each entry would also write the document's row twice, and
// the second write would first flush the batch's buffered inserts (see
// write_multirow.go), in small chunks when such documents are frequent.
// Documents with attachments are still saved entry by entry
// (putReplicated): their stubs resolve against stored revisions.

// repeatedDoc is a document a batch names more than once.
type repeatedDoc struct {
	last   int        // the index of the batch's last entry naming it
	writes []revWrite // the bodies of the revisions merged so far
}

// findRepeats returns the documents docs names more than once, none of
// whose entries has attachments. states is preload's, one per document
// named: a batch without repeats (nearly every one) is told by a count.
func findRepeats(docs []*couchdoc.Doc, states map[string]*docState) map[string]*repeatedDoc {
	named := 0
	for _, d := range docs {
		if d != nil && d.ID != "" && !couchdoc.IsLocalID(d.ID) {
			named++
		}
	}
	if named == len(states) {
		return nil
	}
	var last map[string]int
	var atts, reps map[string]bool
	for i, d := range docs {
		if d == nil || d.ID == "" || couchdoc.IsLocalID(d.ID) {
			continue
		}
		if last == nil {
			last, atts, reps = make(map[string]int, len(docs)), map[string]bool{}, map[string]bool{}
		}
		if _, ok := last[d.ID]; ok {
			reps[d.ID] = true
		}
		last[d.ID] = i
		if len(d.Attachments) > 0 {
			atts[d.ID] = true
		}
	}
	var out map[string]*repeatedDoc
	for id := range reps {
		if atts[id] {
			continue
		}
		if out == nil {
			out = make(map[string]*repeatedDoc, len(reps))
		}
		out[id] = &repeatedDoc{last: last[id]}
	}
	return out
}

// mergeRepeated merges one entry of a repeated document into its tree and
// keeps its body for saveRepeated; it returns what putReplicated would.
func (w *docWriter) mergeRepeated(states map[string]*docState, doc *couchdoc.Doc, rep *repeatedDoc) (string, error) {
	rev, path, body, err := replicatedRev(doc)
	if err != nil {
		return "", err
	}
	st := states[doc.ID]
	if st.tree.Find(path[0]) >= 0 {
		return rev, nil // known: ignored, as in putReplicated
	}
	st.tree.Merge(path, doc.Deleted)
	rep.writes = append(rep.writes, revWrite{rev: rev, body: body})
	return rev, nil
}

// saveRepeated saves a repeated document whose tree grew. Its error is the
// batch's: the entries were checked by mergeRepeated.
func (w *docWriter) saveRepeated(st *docState, rep *repeatedDoc) error {
	if len(rep.writes) == 0 {
		return nil
	}
	_, err := w.saveDoc(st, rep.writes)
	rep.writes = nil
	return err
}
