package sync

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/settee/settee/couchdoc"
)

// memPeer is a small in-memory Peer for unit tests of the pipeline only
// (checkpoint ordering, retries, fault injection). The acceptance tests use
// real peers. It keeps each document's leaves and every revision id it has
// seen; sequences are JSON strings "<n>-x" so nothing numeric is assumed.
type memPeer struct {
	name string
	mu   gosync.Mutex
	seq  int64
	docs map[string]*memDoc
	loc  map[string]json.RawMessage
	lrev map[string]int
	// fail, when set, is called before each method; a non-nil error is
	// returned instead of running it.
	fail     func(method string) error
	calls    map[string]int
	delay    time.Duration // before each BulkDocs
	changeCh chan struct{}
	putDocs  atomic.Int64
}

type memDoc struct {
	seq    int64
	leaves map[string]*couchdoc.Doc
	known  map[string]bool
}

func newMemPeer(name string) *memPeer {
	return &memPeer{name: name, docs: map[string]*memDoc{}, loc: map[string]json.RawMessage{},
		lrev: map[string]int{}, calls: map[string]int{}, changeCh: make(chan struct{})}
}

func (p *memPeer) call(m string) error {
	p.mu.Lock()
	p.calls[m]++
	f := p.fail
	p.mu.Unlock()
	if f != nil {
		return f(m)
	}
	return nil
}

func (p *memPeer) count(m string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[m]
}

func (p *memPeer) String() string { return "mem:" + p.name }

func (p *memPeer) Info(ctx context.Context) (*PeerInfo, error) {
	if err := p.call("Info"); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return &PeerInfo{DBName: p.name, DocCount: int64(len(p.docs)), UpdateSeq: p.seqJSON(p.seq)}, nil
}

func (p *memPeer) seqJSON(n int64) json.RawMessage {
	return json.RawMessage(strconv.Quote(fmt.Sprintf("%d-x", n)))
}

func (p *memPeer) GetLocal(ctx context.Context, id string) (json.RawMessage, error) {
	if err := p.call("GetLocal"); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.loc[id]
	if !ok {
		return nil, couchdoc.ErrNotFound
	}
	return b, nil
}

func (p *memPeer) PutLocal(ctx context.Context, id string, body json.RawMessage) (string, error) {
	if err := p.call("PutLocal"); err != nil {
		return "", err
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return "", couchdoc.ErrBadRequest
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := ""
	if n := p.lrev[id]; n > 0 {
		cur = fmt.Sprintf("0-%d", n)
	}
	if rev, _ := m["_rev"].(string); rev != cur {
		return "", couchdoc.ErrConflict
	}
	p.lrev[id]++
	rev := fmt.Sprintf("0-%d", p.lrev[id])
	m["_rev"] = rev
	b, _ := json.Marshal(m)
	p.loc[id] = b
	return rev, nil
}

func (p *memPeer) seqOf(s json.RawMessage) int64 {
	if len(s) == 0 {
		return 0
	}
	var str string
	if err := json.Unmarshal(s, &str); err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(str[:len(str)-2], 10, 64)
	return n
}

func (p *memPeer) Changes(ctx context.Context, opts ChangesOptions, fn func(*couchdoc.Change) error) (json.RawMessage, error) {
	if err := p.call("Changes"); err != nil {
		return nil, err
	}
	since := p.seqOf(opts.Since)
	for {
		p.mu.Lock()
		var rows []*couchdoc.Change
		for id, d := range p.docs {
			if d.seq > since && (len(opts.DocIDs) == 0 || contains(opts.DocIDs, id)) {
				c := &couchdoc.Change{Seq: p.seqJSON(d.seq), ID: id}
				for rev := range d.leaves {
					c.Changes = append(c.Changes, couchdoc.ChangeRev{Rev: rev})
				}
				rows = append(rows, c)
			}
		}
		sort.Slice(rows, func(i, j int) bool { return p.seqOf(rows[i].Seq) < p.seqOf(rows[j].Seq) })
		if opts.Limit > 0 && len(rows) > opts.Limit {
			rows = rows[:opts.Limit]
		}
		last := p.seqJSON(p.seq)
		if len(rows) > 0 {
			last = rows[len(rows)-1].Seq
		}
		ch := p.changeCh
		p.mu.Unlock()
		if len(rows) == 0 && opts.Feed == "longpoll" {
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		for _, c := range rows {
			if err := fn(c); err != nil {
				return nil, err
			}
		}
		return last, nil
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *memPeer) RevsDiff(ctx context.Context, revs map[string][]string) (map[string]couchdoc.RevsDiffResult, error) {
	if err := p.call("RevsDiff"); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]couchdoc.RevsDiffResult{}
	for id, rs := range revs {
		d := p.docs[id]
		for _, r := range rs {
			if d == nil || !d.known[r] {
				res := out[id]
				res.Missing = append(res.Missing, r)
				out[id] = res
			}
		}
	}
	return out, nil
}

func (p *memPeer) OpenRevs(ctx context.Context, id string, revs []string, attsSince []string, fn func(*couchdoc.Doc, error) error) error {
	if err := p.call("OpenRevs"); err != nil {
		return err
	}
	for _, rev := range revs {
		p.mu.Lock()
		var doc *couchdoc.Doc
		if d := p.docs[id]; d != nil {
			doc = d.leaves[rev]
		}
		p.mu.Unlock()
		if doc == nil {
			if err := fn(nil, couchdoc.Errorf(couchdoc.ErrNotFound, "missing %s", rev)); err != nil {
				return err
			}
			continue
		}
		cp := *doc
		cp.Attachments = nil
		for name, a := range doc.Attachments {
			if cp.Attachments == nil {
				cp.Attachments = map[string]*couchdoc.Attachment{}
			}
			ac := *a
			if len(a.Data) > 1024 {
				ac.Body, ac.Data = bytes.NewReader(a.Data), nil
			}
			cp.Attachments[name] = &ac
		}
		if err := fn(&cp, nil); err != nil {
			return err
		}
	}
	return nil
}

func (p *memPeer) BulkDocs(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error) {
	if err := p.call("BulkDocs"); err != nil {
		return nil, err
	}
	if p.delay > 0 {
		time.Sleep(p.delay)
	}
	var res []couchdoc.DocResult
	for _, d := range docs {
		if bytes.Contains(d.Body, []byte(`"forbidden"`)) {
			res = append(res, couchdoc.DocResult{ID: d.ID, Rev: d.Rev, Error: "forbidden", Reason: "no"})
			continue
		}
		p.store(d)
	}
	return res, nil
}

func (p *memPeer) PutDoc(ctx context.Context, doc *couchdoc.Doc) error {
	if err := p.call("PutDoc"); err != nil {
		return err
	}
	cp := *doc
	cp.Attachments = map[string]*couchdoc.Attachment{}
	for n, a := range doc.Attachments {
		ac := *a
		if a.Body != nil {
			b, err := io.ReadAll(a.Body)
			if err != nil {
				return err
			}
			ac.Body, ac.Data = nil, b
		}
		cp.Attachments[n] = &ac
	}
	p.putDocs.Add(1)
	p.store(&cp)
	return nil
}

func (p *memPeer) EnsureFullCommit(ctx context.Context) error { return p.call("EnsureFullCommit") }

// store writes a revision with its history (new_edits=false).
func (p *memPeer) store(doc *couchdoc.Doc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.docs[doc.ID]
	if d == nil {
		d = &memDoc{leaves: map[string]*couchdoc.Doc{}, known: map[string]bool{}}
		p.docs[doc.ID] = d
	}
	if d.known[doc.Rev] {
		return
	}
	hist := []string{doc.Rev}
	if doc.Revisions != nil {
		hist = doc.Revisions.History()
	}
	for _, r := range hist {
		delete(d.leaves, r)
		d.known[r] = true
	}
	cp := *doc
	d.leaves[doc.Rev] = &cp
	p.seq++
	d.seq = p.seq
	close(p.changeCh)
	p.changeCh = make(chan struct{})
}

// put creates or updates a document as an application would.
func (p *memPeer) put(id, parent, body string) string {
	gen, hist := 1, []string{}
	p.mu.Lock()
	if d := p.docs[id]; d != nil && parent != "" {
		g, _, _ := couchdoc.ParseRev(parent)
		gen = g + 1
		hist = d.leaves[parent].Revisions.IDs
	}
	p.mu.Unlock()
	hash := couchdoc.NewRevHash(false, parent, []byte(body), nil)
	doc := &couchdoc.Doc{ID: id, Rev: couchdoc.FormatRev(gen, hash), Body: json.RawMessage(body),
		Revisions: &couchdoc.Revisions{Start: gen, IDs: append([]string{hash}, hist...)}}
	p.store(doc)
	return doc.Rev
}

func (p *memPeer) leafCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, d := range p.docs {
		n += len(d.leaves)
	}
	return n
}
