package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"text/tabwriter"
	"time"
)

// VDUWrites is one server's writes without and with a
// validate_doc_update (phase views): new documents in _bulk_docs batches,
// each batch written to a database without one and then (or first: the
// order alternates) to one with one, so that both see the same load.
type VDUWrites struct {
	Server string `json:"server"`
	Docs   int    `json:"docs"`
	// Seconds are the _bulk_docs requests' wall time; CPUSeconds the
	// server's (CouchDB's with its JavaScript processes).
	PlainSeconds        float64 `json:"plain_seconds"`
	ValidatedSeconds    float64 `json:"validated_seconds"`
	PlainCPUSeconds     float64 `json:"plain_cpu_seconds"`
	ValidatedCPUSeconds float64 `json:"validated_cpu_seconds"`
	// Ratio is the validated writes' time over the plain ones' (issue
	// 39's target: at most 1.5x on settee serve); CPURatio by CPU.
	Ratio    float64 `json:"ratio"`
	CPURatio float64 `json:"cpu_ratio"`
}

// vduSource is a typical validate_doc_update: it reads a field of every
// new document and refuses those without it.
const vduSource = `function (newDoc, oldDoc, userCtx, secObj) { if (!newDoc._deleted && typeof newDoc.type !== 'string') { throw({forbidden: 'type must be a string'}); } }`

// vduBatch is the documents per _bulk_docs request.
const vduBatch = 100

// vduWrites measures the servers' writes with and without a validator.
func (b *bench) vduWrites(ctx context.Context, targets []viewTarget) error {
	n := b.cfg.VDUWrites
	if n <= 0 {
		return nil
	}
	for _, t := range targets {
		h, ok := t.(*httpViews)
		if !ok {
			continue
		}
		plain, validated := h.db+"-vdu-off", h.db+"-vdu-on"
		w := &VDUWrites{Server: h.label}
		err := func() error {
			for _, db := range []string{plain, validated} {
				if err := createDB(ctx, db); err != nil {
					return err
				}
				if !b.cfg.Keep {
					defer func() { _ = deleteDB(context.Background(), db) }()
				}
			}
			ddoc := mustJSON(map[string]any{"language": "javascript", "validate_doc_update": vduSource})
			if err := httpDo(ctx, http.MethodPut, validated+"/_design/vdu", bytes.NewReader([]byte(ddoc)), "application/json", nil); err != nil {
				return err
			}
			// Untimed: the first validated write starts the server's
			// JavaScript runtime, once per database and process.
			for _, db := range []string{plain, validated} {
				if err := postBulk(ctx, db, []byte(`{"docs":[{"_id":"warm-up","type":"note"}]}`)); err != nil {
					return err
				}
			}
			b.logf("views: %d new documents into %s without and with a validate_doc_update", n, h.label)
			for k := 0; k*vduBatch < n; k++ {
				body := vduBody(b.ds, k*vduBatch, min(vduBatch, n-k*vduBatch))
				order := []bool{false, true}
				if k%2 == 1 {
					order = []bool{true, false}
				}
				for _, v := range order {
					db, secs, cpu := plain, &w.PlainSeconds, &w.PlainCPUSeconds
					if v {
						db, secs, cpu = validated, &w.ValidatedSeconds, &w.ValidatedCPUSeconds
					}
					c0, t0 := h.cpu(), time.Now()
					if err := postBulk(ctx, db, body); err != nil {
						return err
					}
					*secs += time.Since(t0).Seconds()
					*cpu += h.cpu() - c0
				}
				w.Docs += min(vduBatch, n-k*vduBatch)
			}
			// The validator ran: a document without a type is refused.
			var res []struct {
				Error string `json:"error"`
			}
			if err := httpDo(ctx, http.MethodPost, validated+"/_bulk_docs", bytes.NewReader([]byte(`{"docs":[{"_id":"untyped"}]}`)), "application/json", &res); err != nil {
				return err
			}
			if len(res) != 1 || res[0].Error != "forbidden" {
				return fmt.Errorf("%s answered %+v to a document its validate_doc_update refuses", h.label, res)
			}
			return nil
		}()
		if err != nil {
			b.fail("views: writes with a validate_doc_update on "+h.label, err)
			continue
		}
		w.Ratio = ratio(w.ValidatedSeconds, w.PlainSeconds)
		w.CPURatio = ratio(w.ValidatedCPUSeconds, w.PlainCPUSeconds)
		b.logf("views: writes on %s: %.0f docs/s without a validate_doc_update, %.0f with (%.2fx the time, %.2fx the server's CPU)",
			h.label, float64(w.Docs)/w.PlainSeconds, float64(w.Docs)/w.ValidatedSeconds, w.Ratio, w.CPURatio)
		b.check(fmt.Sprintf("views: %s refuses what its validate_doc_update refuses", h.label))
		b.res.VDUWrites = append(b.res.VDUWrites, w)
	}
	return ctx.Err()
}

// vduBody is a _bulk_docs body of count new documents (new ids, the
// dataset's bodies from document first on).
func vduBody(ds *Dataset, first, count int) []byte {
	buf := []byte(`{"docs":[`)
	for i := range count {
		if i > 0 {
			buf = append(buf, ',')
		}
		g := ds.Doc(first + i)
		body := g.Leaves[0].Body
		if len(body) <= 2 { // a tombstone's: give it a type
			body = []byte(`{"type":"note"}`)
		}
		buf = append(buf, `{"_id":"vdu-`...)
		buf = strconv.AppendInt(buf, int64(first+i), 10)
		buf = append(buf, `",`...)
		buf = append(buf, body[1:]...)
	}
	return append(buf, "]}"...)
}

// writeVDUTable prints the writes with and without a validator, if measured.
func writeVDUTable(w io.Writer, r *Results) {
	if len(r.VDUWrites) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| writes, validate_doc_update\t docs\t docs/s without\t docs/s with\t time ratio\t server CPU us/doc without / with\t CPU ratio\t")
	fmt.Fprintln(tw, "|---\t---:\t---:\t---:\t---:\t---:\t---:\t")
	for _, x := range r.VDUWrites {
		fmt.Fprintf(tw, "| %s\t %d\t %.0f\t %.0f\t %.2f\t %.0f / %.0f\t %.2f\t\n", x.Server, x.Docs,
			float64(x.Docs)/x.PlainSeconds, float64(x.Docs)/x.ValidatedSeconds, x.Ratio,
			x.PlainCPUSeconds*1e6/float64(x.Docs), x.ValidatedCPUSeconds*1e6/float64(x.Docs), x.CPURatio)
	}
	tw.Flush()
	fmt.Fprintln(w)
}
