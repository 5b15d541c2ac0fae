package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/settee/settee/couchdoc"
)

// pouch is a minimal HTTP client for one pouchdb-server database: just the
// calls the differential test compares.
type pouch struct {
	db       string // database URL
	c        *http.Client
	requests int
}

func newPouch(dbURL string) *pouch {
	return &pouch{db: dbURL, c: &http.Client{Timeout: 30 * time.Second}}
}

// do sends a request and decodes a JSON answer into out (when not nil). It
// returns the HTTP status; transport and decoding problems are errors.
func (p *pouch) do(ctx context.Context, method, path string, q url.Values, body any, out any) (int, error) {
	p.requests++
	u := p.db + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: decode %q: %w", method, u, b, err)
		}
	}
	return resp.StatusCode, nil
}

func docPath(id string) string { return "/" + url.PathEscape(id) }

// bulkDocs posts docs to _bulk_docs; with new_edits=false pouchdb-server
// (like CouchDB) answers only the failures.
func (p *pouch) bulkDocs(ctx context.Context, docs []*couchdoc.Doc, newEdits bool) error {
	body := struct {
		Docs     []*couchdoc.Doc `json:"docs"`
		NewEdits bool            `json:"new_edits"`
	}{docs, newEdits}
	var res []couchdoc.DocResult
	st, err := p.do(ctx, http.MethodPost, "/_bulk_docs", nil, body, &res)
	if err != nil {
		return err
	}
	if st != http.StatusCreated && st != http.StatusOK {
		return fmt.Errorf("_bulk_docs: status %d", st)
	}
	for _, r := range res {
		if r.Error != "" {
			return fmt.Errorf("_bulk_docs: %s: %s: %s", r.ID, r.Error, r.Reason)
		}
	}
	return nil
}

// put writes a new_edits=true revision with PUT /db/id and returns its rev
// and the status.
func (p *pouch) put(ctx context.Context, doc *couchdoc.Doc) (string, int, error) {
	var res couchdoc.DocResult
	st, err := p.do(ctx, http.MethodPut, docPath(doc.ID), nil, doc, &res)
	return res.Rev, st, err
}

// del deletes a revision with DELETE /db/id?rev=.
func (p *pouch) del(ctx context.Context, id, rev string) (string, int, error) {
	var res couchdoc.DocResult
	st, err := p.do(ctx, http.MethodDelete, docPath(id), url.Values{"rev": {rev}}, nil, &res)
	return res.Rev, st, err
}

// pouchDoc is a document as pouchdb-server sends it, with the read-only
// members ParseDoc drops.
type pouchDoc struct {
	*couchdoc.Doc
	Conflicts []string
}

func parsePouchDoc(raw json.RawMessage) (*pouchDoc, error) {
	d, err := couchdoc.ParseDoc(raw)
	if err != nil {
		return nil, err
	}
	var ro struct {
		Conflicts []string `json:"_conflicts"`
	}
	if err := json.Unmarshal(raw, &ro); err != nil {
		return nil, err
	}
	return &pouchDoc{Doc: d, Conflicts: ro.Conflicts}, nil
}

// get reads the winner (with _conflicts) or a given rev (with _revisions).
// It returns nil and the status when the answer is not 200.
func (p *pouch) get(ctx context.Context, id, rev string) (*pouchDoc, int, error) {
	q := url.Values{"conflicts": {"true"}}
	if rev != "" {
		q = url.Values{"rev": {rev}, "revs": {"true"}}
	}
	var raw json.RawMessage
	st, err := p.do(ctx, http.MethodGet, docPath(id), q, nil, &raw)
	if err != nil || st != http.StatusOK {
		return nil, st, err
	}
	d, err := parsePouchDoc(raw)
	return d, st, err
}

// openRevsAll reads every leaf with its history (open_revs=all&revs=true).
// pouchdb-server answers JSON [{"ok": doc}, ...] even when asked for
// multipart, as the couchdb-peers note says.
func (p *pouch) openRevsAll(ctx context.Context, id string) ([]*couchdoc.Doc, error) {
	var rows []struct {
		OK      json.RawMessage `json:"ok"`
		Missing string          `json:"missing"`
	}
	st, err := p.do(ctx, http.MethodGet, docPath(id), url.Values{"open_revs": {"all"}, "revs": {"true"}}, nil, &rows)
	if err != nil {
		return nil, err
	}
	if st != http.StatusOK {
		return nil, fmt.Errorf("open_revs=all %s: status %d", id, st)
	}
	var out []*couchdoc.Doc
	for _, r := range rows {
		if r.OK == nil {
			return nil, fmt.Errorf("open_revs=all %s: row without ok (missing %q)", id, r.Missing)
		}
		d, err := couchdoc.ParseDoc(r.OK)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// revsDiff posts _revs_diff.
func (p *pouch) revsDiff(ctx context.Context, q map[string][]string) (map[string]couchdoc.RevsDiffResult, error) {
	out := map[string]couchdoc.RevsDiffResult{}
	st, err := p.do(ctx, http.MethodPost, "/_revs_diff", nil, q, &out)
	if err != nil {
		return nil, err
	}
	if st != http.StatusOK {
		return nil, fmt.Errorf("_revs_diff: status %d", st)
	}
	return out, nil
}

// pouchChange is a changes row; pouchdb-server's seqs are integers.
type pouchChange struct {
	Seq     int64                `json:"seq"`
	ID      string               `json:"id"`
	Changes []couchdoc.ChangeRev `json:"changes"`
	Deleted bool                 `json:"deleted"`
}

// changes reads the whole (small) feed, style=all_docs or main_only.
func (p *pouch) changes(ctx context.Context, allDocs bool) ([]pouchChange, error) {
	q := url.Values{}
	if allDocs {
		q.Set("style", "all_docs")
	}
	var res struct {
		Results []pouchChange `json:"results"`
	}
	st, err := p.do(ctx, http.MethodGet, "/_changes", q, nil, &res)
	if err != nil {
		return nil, err
	}
	if st != http.StatusOK {
		return nil, fmt.Errorf("_changes: status %d", st)
	}
	return res.Results, nil
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func join(s []string) string { return strings.Join(s, ",") }

// allDocsRow is a row of _all_docs.
type allDocsRow struct {
	ID    string `json:"id"`
	Value struct {
		Rev string `json:"rev"`
	} `json:"value"`
}

// allDocs reads _all_docs (live documents, by id).
func (p *pouch) allDocs(ctx context.Context) (int64, []allDocsRow, error) {
	var res struct {
		TotalRows int64        `json:"total_rows"`
		Rows      []allDocsRow `json:"rows"`
	}
	st, err := p.do(ctx, http.MethodGet, "/_all_docs", nil, nil, &res)
	if err != nil {
		return 0, nil, err
	}
	if st != http.StatusOK {
		return 0, nil, fmt.Errorf("_all_docs: status %d", st)
	}
	return res.TotalRows, res.Rows, nil
}

// attachment reads an attachment's bytes at a revision.
func (p *pouch) attachment(ctx context.Context, id, name, rev string) ([]byte, error) {
	p.requests++
	u := p.db + docPath(id) + "/" + url.PathEscape(name) + "?" + url.Values{"rev": {rev}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: status %d: %s", u, resp.StatusCode, b)
	}
	return b, err
}
