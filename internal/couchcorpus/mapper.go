package couchcorpus

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	gosync "sync"
)

// Mapper translates between CouchDB's recorded values and the replaying
// server's own where the corpus README calls them volatile: revisions made
// by ordinary (new_edits=true) writes are content hashes another server
// computes its own way, and sequences are opaque "N-g1AAAA..." strings.
// It learns revision pairs from the answers to writes.
type Mapper struct {
	mu     gosync.Mutex
	revs   map[string]string // CouchDB's rev -> ours
	hashes map[string]string // the same without generations, as in _revisions
}

// NewMapper returns an empty Mapper.
func NewMapper() *Mapper { return &Mapper{revs: map[string]string{}, hashes: map[string]string{}} }

var (
	revRE      = regexp.MustCompile(`\b\d+-[0-9a-f]{32}\b`)
	hashRE     = regexp.MustCompile(`\b[0-9a-f]{32}\b`)
	couchSeqRE = regexp.MustCompile(`(\d+)-g[0-9A-Za-z_\-]+`)
)

// Rev maps one of CouchDB's revisions to ours (itself when unknown).
func (m *Mapper) Rev(couch string) string { return m.lookup(m.revs, couch) }

// hash maps a revision hash, or an id the server made up, likewise.
func (m *Mapper) hash(couch string) string { return m.lookup(m.hashes, couch) }

func (m *Mapper) lookup(table map[string]string, couch string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := table[couch]; ok {
		return r
	}
	return couch
}

// Learn records that CouchDB's rev corresponds to ours. A pair whose
// generations differ is ignored: that is a real difference, not a hash.
func (m *Mapper) Learn(couch, ours string) {
	if couch == ours || !revRE.MatchString(couch) || !revRE.MatchString(ours) {
		return
	}
	cg, _, _ := strings.Cut(couch, "-")
	og, _, _ := strings.Cut(ours, "-")
	if cg != og {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.revs[couch]; !ok {
		m.revs[couch] = ours
		m.hashes[couch[len(cg)+1:]] = ours[len(og)+1:]
	}
}

// text replaces CouchDB's known revisions in s by ours.
func (m *Mapper) text(s string) string {
	return hashRE.ReplaceAllStringFunc(revRE.ReplaceAllStringFunc(s, m.Rev), m.hash)
}

// Request builds the request to replay against base (such as
// http://127.0.0.1:PORT): CouchDB's revisions replaced by ours, opaque
// sequences in the query by their numeric prefix, hop-by-hop and framing
// headers dropped. auth, when set, replaces the masked credentials.
func (m *Mapper) Request(base string, e *Exchange, auth func(*http.Request)) (*http.Request, error) {
	path := m.text(e.Path)
	query := couchSeqRE.ReplaceAllString(m.text(e.Query), "$1")
	target := base + path
	if query != "" {
		target += "?" + query
	}
	body := e.RequestBody()
	if !e.ReqBodyB64 {
		body = []byte(m.text(string(body)))
	}
	req, err := http.NewRequest(e.Method, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.ContentLength = int64(len(body))
	for k, v := range e.ReqHeaders {
		switch strings.ToLower(k) {
		case "host", "content-length", "authorization", "cookie", "connection", "transfer-encoding":
			continue
		}
		req.Header.Set(k, m.text(v))
	}
	// The exchange's number, for an Auth that depends on it.
	req.Header.Set("X-Corpus-Seq", strconv.Itoa(e.Seq))
	if e.ReqHeader("Accept-Encoding") == "" {
		// Go's transport would otherwise ask for gzip on its own.
		req.Header.Set("Accept-Encoding", "identity")
	}
	if e.ReqHeader("Authorization") != "" || e.ReqHeader("Cookie") != "" {
		if auth != nil {
			auth(req)
		}
	}
	return req, nil
}

// LearnFrom learns the revisions of a write's answer: wherever CouchDB's
// JSON answer and ours hold a "rev", "_rev" or "id"-beside-"rev" in the
// same place, and from document ETags.
func (m *Mapper) LearnFrom(e *Exchange, got *Response) {
	if e.Status/100 != 2 || got.Status/100 != 2 {
		return
	}
	m.Learn(strings.Trim(e.RespHeader("ETag"), `"`), strings.Trim(got.Header.Get("ETag"), `"`))
	var want, have any
	if json.Unmarshal(e.ResponseBody(), &want) != nil || json.Unmarshal(got.Body, &have) != nil {
		return
	}
	m.learnJSON(want, have)
}

func (m *Mapper) learnJSON(want, have any) {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return
		}
		for k, wv := range w {
			ws, _ := wv.(string)
			hs, _ := h[k].(string)
			switch k {
			case "rev", "_rev":
				m.Learn(ws, hs)
				continue
			case "id":
				// An id the server made up (POST /db, _bulk_docs without
				// _id): CouchDB's and ours are both uuids.
				if ws != hs && hashRE.MatchString(ws) && len(ws) == 32 && hashRE.MatchString(hs) && len(hs) == 32 {
					m.mu.Lock()
					m.hashes[ws] = hs
					m.mu.Unlock()
				}
				continue
			}
			m.learnJSON(wv, h[k])
		}
	case []any:
		h, ok := have.([]any)
		if !ok {
			return
		}
		for i := 0; i < len(w) && i < len(h); i++ {
			m.learnJSON(w[i], h[i])
		}
	}
}
