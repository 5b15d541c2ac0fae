package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// DatasetStats describes what was generated.
type DatasetStats struct {
	Docs            int   `json:"docs"`
	Leaves          int   `json:"leaves"`
	Revisions       int   `json:"revisions"`
	Conflicted      int   `json:"conflicted"`
	Deleted         int   `json:"deleted"`
	Attachments     int   `json:"attachments"`
	AttachmentBytes int64 `json:"attachment_bytes"`
	BodyBytes       int64 `json:"body_bytes"`
	// Live is the expected doc_count, Deleted the expected doc_del_count.
	Live int `json:"live"`
}

// Batch limits of _bulk_docs requests sent by the harness.
const (
	batchMaxDocs  = 2000
	batchMaxBytes = 16 << 20
)

// loadResult is the outcome of sending documents with _bulk_docs.
type loadResult struct {
	Stats DatasetStats
	// SendTime is the time spent in _bulk_docs requests only (generation
	// excluded): the push limit.
	SendTime  time.Duration
	Requests  int
	BytesSent int64
}

// loadDataset writes the whole dataset into dbURL with _bulk_docs
// new_edits=false in large batches.
func loadDataset(ctx context.Context, ds *Dataset, dbURL string) (*loadResult, error) {
	if ds.BigAttachment > 0 {
		return loadBig(ctx, ds, dbURL)
	}
	docs := make(chan *GenDoc, 256)
	genCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // generation overlaps sending; its time is not counted
		defer close(docs)
		for i := 0; i < ds.Count(); i++ {
			select {
			case docs <- ds.Doc(i):
			case <-genCtx.Done():
				return
			}
		}
	}()
	return sendDocs(ctx, dbURL, docs)
}

// loadEdits applies the incremental step's edits to dbURL.
func loadEdits(ctx context.Context, ds *Dataset, dbURL string) (*loadResult, error) {
	docs := make(chan *GenDoc, 256)
	var genErr error
	go func() {
		defer close(docs)
		for i := 0; i < ds.Count(); i++ {
			if !ds.Changed(i) {
				continue
			}
			g, err := ds.Edit(i)
			if err != nil {
				genErr = err
				return
			}
			docs <- g
		}
	}()
	res, err := sendDocs(ctx, dbURL, docs)
	for range docs { // drain on error
	}
	if err == nil {
		err = genErr
	}
	return res, err
}

func sendDocs(ctx context.Context, dbURL string, docs <-chan *GenDoc) (*loadResult, error) {
	res := &loadResult{}
	buf := make([]byte, 0, batchMaxBytes+1<<20)
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		buf = append(buf, "]}"...)
		start := time.Now()
		err := postBulk(ctx, dbURL, buf)
		res.SendTime += time.Since(start)
		res.Requests++
		res.BytesSent += int64(len(buf))
		buf, n = buf[:0], 0
		return err
	}
	for g := range docs {
		if n == 0 {
			buf = append(buf, `{"new_edits":false,"docs":[`...)
		} else {
			buf = append(buf, ',')
		}
		before := len(buf)
		buf = g.AppendBulkEntries(buf)
		res.Stats.add(g, int64(len(buf)-before))
		n++
		if n >= batchMaxDocs || len(buf) >= batchMaxBytes {
			if err := flush(); err != nil {
				return res, err
			}
		}
	}
	if err := flush(); err != nil {
		return res, err
	}
	return res, ctx.Err()
}

func (s *DatasetStats) add(g *GenDoc, bytes int64) {
	s.Docs++
	s.Leaves += len(g.Leaves)
	seen := map[string]bool{}
	for _, l := range g.Leaves {
		for _, id := range l.IDs {
			seen[id] = true
		}
	}
	s.Revisions += len(seen)
	switch g.Kind {
	case kindConflict:
		s.Conflicted++
	case kindDeleted:
		s.Deleted++
	}
	if g.Kind != kindDeleted {
		s.Live++
	}
	if g.Att != nil {
		s.Attachments++
		s.AttachmentBytes += g.Att.Size
		bytes -= (g.Att.Size + 2) / 3 * 4
	}
	s.BodyBytes += bytes
}

// postBulk sends one _bulk_docs body and checks every per-document result.
func postBulk(ctx context.Context, dbURL string, body []byte) error {
	var results []struct {
		ID     string `json:"id"`
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}
	if err := httpDo(ctx, http.MethodPost, dbURL+"/_bulk_docs", bytes.NewReader(body), "application/json", &results); err != nil {
		return err
	}
	for _, r := range results {
		if r.Error != "" {
			return fmt.Errorf("_bulk_docs: %s: %s: %s", r.ID, r.Error, r.Reason)
		}
	}
	return nil
}

// bigInlineMax is the largest attachment sent inline in _bulk_docs: its
// base64 must fit in one JavaScript string on pouchdb-server (V8 strings
// stop at 512 MiB).
const bigInlineMax = 256 << 20

// loadBig writes the big-attachment document with a streamed _bulk_docs
// (new_edits=false, attachment inline as base64, never held in memory)
// when it fits in a JavaScript string, else the document first and then
// its attachment with a standalone attachment PUT.
func loadBig(ctx context.Context, ds *Dataset, dbURL string) (*loadResult, error) {
	g := ds.Doc(0)
	if g.Att.Size <= bigInlineMax {
		return streamBulkDoc(ctx, g, dbURL)
	}
	res := &loadResult{}
	start := time.Now()
	var put struct {
		Rev string `json:"rev"`
	}
	body := append([]byte(nil), g.Leaves[0].Body...)
	if err := httpDo(ctx, http.MethodPut, dbURL+"/"+g.ID, bytes.NewReader(body), "application/json", &put); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, dbURL+"/"+g.ID+"/"+g.Att.Name+"?rev="+put.Rev, g.Att.Reader())
	if err != nil {
		return nil, err
	}
	req.ContentLength = g.Att.Size
	req.Header.Set("Content-Type", g.Att.ContentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("put attachment: %w", err)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("put attachment: status %d: %s", resp.StatusCode, msg)
	}
	var ok struct {
		Rev string `json:"rev"`
	}
	_ = json.Unmarshal(msg, &ok)
	res.SendTime = time.Since(start)
	res.Requests = 2
	res.BytesSent = int64(len(body)) + g.Att.Size
	res.Stats = DatasetStats{Docs: 1, Leaves: 1, Revisions: 2, Live: 1, Attachments: 1, AttachmentBytes: g.Att.Size, BodyBytes: int64(len(body))}
	return res, nil
}

// streamBulkDoc sends one document with its attachment inline in a
// _bulk_docs body generated on the fly.
func streamBulkDoc(ctx context.Context, g *GenDoc, dbURL string) (*loadResult, error) {
	pr, pw := io.Pipe()
	go func() {
		head := []byte(`{"new_edits":false,"docs":[`)
		// Splice the attachment in before the entry's body members.
		prefix := fmt.Sprintf(`{"_id":%q,"_rev":%q,"_revisions":{"start":%d,"ids":%s},"_attachments":{%q:{"content_type":%q,"data":"`,
			g.ID, g.Leaves[0].Rev(), g.Leaves[0].Start, mustJSON(g.Leaves[0].IDs), g.Att.Name, g.Att.ContentType)
		_, err := pw.Write(append(head, prefix...))
		if err == nil {
			enc := base64.NewEncoder(base64.StdEncoding, pw)
			_, err = io.Copy(enc, g.Att.Reader())
			if err == nil {
				err = enc.Close()
			}
		}
		if err == nil {
			rest := []byte(`"}}`)
			if body := g.Leaves[0].Body; len(body) > 2 {
				rest = append(append(rest, ','), body[1:]...)
			} else {
				rest = append(rest, '}')
			}
			_, err = pw.Write(append(rest, "]}"...))
		}
		pw.CloseWithError(err)
	}()
	start := time.Now()
	var results []struct {
		ID     string `json:"id"`
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}
	err := httpDo(ctx, http.MethodPost, dbURL+"/_bulk_docs", pr, "application/json", &results)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return nil, err
	}
	for _, r := range results {
		if r.Error != "" {
			return nil, fmt.Errorf("_bulk_docs: %s: %s: %s", r.ID, r.Error, r.Reason)
		}
	}
	res := &loadResult{SendTime: time.Since(start), Requests: 1}
	res.BytesSent = (g.Att.Size+2)/3*4 + int64(len(g.Leaves[0].Body))
	res.Stats = DatasetStats{Docs: 1, Leaves: 1, Revisions: len(g.Leaves[0].IDs), Live: 1, Attachments: 1, AttachmentBytes: g.Att.Size, BodyBytes: int64(len(g.Leaves[0].Body))}
	return res, nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
