package main

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
)

// Dataset generates the benchmark's documents from a seed. Document i is a
// pure function of (Seed, i), so every run and every contender sees the
// same data, and document i does not depend on how many documents there are.
type Dataset struct {
	Seed uint64
	Docs int
	// BigAttachment, when > 0, replaces the documents by a single document
	// with one attachment of that many bytes.
	BigAttachment int64
}

// Kinds of generated documents.
const (
	kindSingle   = "single"   // one revision
	kindMulti    = "multi"    // a linear history of 2-6 revisions
	kindConflict = "conflict" // two non-deleted leaves
	kindDeleted  = "deleted"  // a history ending in a tombstone
)

// GenDoc is one generated document: its leaves, each with its history.
type GenDoc struct {
	ID     string
	Kind   string
	Leaves []GenLeaf
	// Att is the attachment of the first leaf, if any.
	Att *GenAtt
}

// GenLeaf is one leaf revision with its history (newest first).
type GenLeaf struct {
	Start   int
	IDs     []string
	Deleted bool
	Body    []byte // compact JSON object of the user's fields
}

// Rev returns the leaf's revision id.
func (l *GenLeaf) Rev() string { return strconv.Itoa(l.Start) + "-" + l.IDs[0] }

// GenAtt describes an attachment whose bytes come from a seeded generator.
type GenAtt struct {
	Name        string
	ContentType string
	Size        int64
	seed        uint64
	index       uint64
}

// Reader streams the attachment's bytes.
func (a *GenAtt) Reader() io.Reader {
	return &randReader{r: rand.New(rand.NewPCG(a.seed^0xa77ac4, a.index)), left: a.Size}
}

// Bytes returns the attachment's bytes.
func (a *GenAtt) Bytes() []byte {
	b := make([]byte, a.Size)
	_, _ = io.ReadFull(a.Reader(), b)
	return b
}

type randReader struct {
	r    *rand.Rand
	left int64
}

func (rr *randReader) Read(p []byte) (int, error) {
	if rr.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > rr.left {
		p = p[:rr.left]
	}
	n := 0
	for n+8 <= len(p) {
		v := rr.r.Uint64()
		for k := 0; k < 8; k++ {
			p[n+k] = byte(v >> (8 * k))
		}
		n += 8
	}
	if n < len(p) {
		v := rr.r.Uint64()
		for ; n < len(p); n++ {
			p[n] = byte(v)
			v >>= 8
		}
	}
	rr.left -= int64(n)
	return n, nil
}

// Count returns how many documents the dataset has.
func (d *Dataset) Count() int {
	if d.BigAttachment > 0 {
		return 1
	}
	return d.Docs
}

// Doc generates document i.
func (d *Dataset) Doc(i int) *GenDoc {
	r := rand.New(rand.NewPCG(d.Seed, uint64(i)))
	g := &GenDoc{ID: fmt.Sprintf("doc-%08d", i)}
	if d.BigAttachment > 0 {
		g.ID = "big-attachment"
		g.Kind = kindSingle
		g.Leaves = []GenLeaf{{Start: 1, IDs: []string{revHash(r)}, Body: genBody(r, i)}}
		g.Att = &GenAtt{Name: "big.bin", ContentType: "application/octet-stream", Size: d.BigAttachment, seed: d.Seed, index: uint64(i)}
		return g
	}
	p := r.IntN(100)
	switch {
	case i%100 == 7 || i%100 == 50:
		// Docs changed by the incremental step and docs with attachments
		// have a plain history.
		if p < 50 {
			g.Kind = kindSingle
		} else {
			g.Kind = kindMulti
		}
	case p < 5:
		g.Kind = kindConflict
	case p < 10:
		g.Kind = kindDeleted
	case p < 30:
		g.Kind = kindMulti
	default:
		g.Kind = kindSingle
	}
	switch g.Kind {
	case kindSingle:
		g.Leaves = []GenLeaf{{Start: 1, IDs: []string{revHash(r)}, Body: genBody(r, i)}}
	case kindMulti:
		n := 2 + r.IntN(5)
		g.Leaves = []GenLeaf{{Start: n, IDs: revHashes(r, n), Body: genBody(r, i)}}
	case kindDeleted:
		n := 2 + r.IntN(3)
		g.Leaves = []GenLeaf{{Start: n, IDs: revHashes(r, n), Deleted: true, Body: []byte("{}")}}
	case kindConflict:
		base := revHashes(r, 1+r.IntN(4))
		for b := 0; b < 2; b++ {
			ext := revHashes(r, 1+r.IntN(2))
			ids := append(ext, base...)
			g.Leaves = append(g.Leaves, GenLeaf{Start: len(ids), IDs: ids, Body: genBody(r, i)})
		}
	}
	if i%100 == 50 {
		size := int64(10<<10 + r.IntN(490<<10))
		g.Att = &GenAtt{Name: "photo-" + strconv.Itoa(i) + ".bin", ContentType: "application/octet-stream", Size: size, seed: d.Seed, index: uint64(i)}
	}
	return g
}

// Changed reports whether the incremental step edits document i.
func (d *Dataset) Changed(i int) bool { return d.BigAttachment == 0 && i%100 == 7 }

// ChangedCount is the number of documents the incremental step edits.
func (d *Dataset) ChangedCount() int {
	n := 0
	for i := 0; i < d.Count(); i++ {
		if d.Changed(i) {
			n++
		}
	}
	return n
}

// Edit returns the new revision the incremental step adds on top of
// document i's only leaf.
func (d *Dataset) Edit(i int) (*GenDoc, error) {
	g := d.Doc(i)
	if len(g.Leaves) != 1 || g.Leaves[0].Deleted {
		return nil, fmt.Errorf("document %d (%s) is not editable", i, g.Kind)
	}
	r := rand.New(rand.NewPCG(d.Seed^0xed17, uint64(i)))
	old := g.Leaves[0]
	ids := append([]string{revHash(r)}, old.IDs...)
	body := genBody(r, i)
	return &GenDoc{ID: g.ID, Kind: g.Kind, Leaves: []GenLeaf{{Start: old.Start + 1, IDs: ids, Body: body}}}, nil
}

func revHash(r *rand.Rand) string {
	var b [16]byte
	for k := 0; k < 16; k += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			b[k+j] = byte(v >> (8 * j))
		}
	}
	return hex.EncodeToString(b[:])
}

func revHashes(r *rand.Rand, n int) []string {
	ids := make([]string, n)
	for k := range ids {
		ids[k] = revHash(r)
	}
	return ids
}

// AppendBulkEntries appends the document's _bulk_docs (new_edits=false)
// entries, one per leaf, comma-separated, with explicit _revisions and the
// attachment inline as base64.
func (g *GenDoc) AppendBulkEntries(dst []byte) []byte {
	for k := range g.Leaves {
		l := &g.Leaves[k]
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"_id":`...)
		dst = strconv.AppendQuote(dst, g.ID)
		dst = append(dst, `,"_rev":`...)
		dst = strconv.AppendQuote(dst, l.Rev())
		if l.Deleted {
			dst = append(dst, `,"_deleted":true`...)
		}
		dst = append(dst, `,"_revisions":{"start":`...)
		dst = strconv.AppendInt(dst, int64(l.Start), 10)
		dst = append(dst, `,"ids":[`...)
		for j, id := range l.IDs {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '"')
			dst = append(dst, id...)
			dst = append(dst, '"')
		}
		dst = append(dst, "]}"...)
		if g.Att != nil && k == 0 {
			dst = append(dst, `,"_attachments":{`...)
			dst = strconv.AppendQuote(dst, g.Att.Name)
			dst = append(dst, `:{"content_type":`...)
			dst = strconv.AppendQuote(dst, g.Att.ContentType)
			dst = append(dst, `,"data":"`...)
			dst = base64.StdEncoding.AppendEncode(dst, g.Att.Bytes())
			dst = append(dst, `"}}`...)
		}
		if len(l.Body) > 2 {
			dst = append(dst, ',')
			dst = append(dst, l.Body[1:]...) // the body's members and its closing brace
		} else {
			dst = append(dst, '}')
		}
	}
	return dst
}
