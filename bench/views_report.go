package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// writeViewsTable prints phase views, if it ran: one column per contender.
func writeViewsTable(w io.Writer, r *Results) {
	if len(r.Views) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	head, sep := "| views", "|---"
	for _, v := range r.Views {
		head += "\t " + v.Contender
		sep += "\t---:"
	}
	fmt.Fprintln(tw, head+"\t")
	fmt.Fprintln(tw, sep+"\t")
	row := func(label string, cell func(v *ViewsRun) string) {
		var b strings.Builder
		b.WriteString("| " + label)
		for _, v := range r.Views {
			b.WriteString("\t " + cell(v))
		}
		fmt.Fprintln(tw, b.String()+"\t")
	}
	row("load the dataset, s", func(v *ViewsRun) string { return fmt.Sprintf("%.1f", v.LoadSeconds) })
	for j, bd := range r.Views[0].Builds {
		red := bd.Reduce
		if strings.HasPrefix(red, "function") {
			red = "JS reduce"
		}
		row(fmt.Sprintf("first build, %s (%s): s (docs/s), CPU s", bd.DDoc, red), func(v *ViewsRun) string {
			if j >= len(v.Builds) {
				return ""
			}
			x := v.Builds[j]
			return fmt.Sprintf("%.2f (%.0f), %.2f", x.Seconds, x.DocsPerSec, x.CPUSeconds)
		})
		row(fmt.Sprintf("incremental after %d writes, %s: ms (CPU ms)", bd.Writes, bd.DDoc), func(v *ViewsRun) string {
			if j >= len(v.Builds) {
				return ""
			}
			x := v.Builds[j]
			return fmt.Sprintf("%.0f (%.0f)", x.IncrementalMs, x.IncrementalCPUMs)
		})
	}
	for j, s := range r.Views[0].Shapes {
		row(fmt.Sprintf("%s: p50 / p99 ms (CPU ms/query), %d queries", shapeTitle(s.Name), s.Queries), func(v *ViewsRun) string {
			if j >= len(v.Shapes) {
				return ""
			}
			x := v.Shapes[j]
			return fmt.Sprintf("%.2f / %.2f (%.2f)", x.P50Ms, x.P99Ms, x.CPUMsPerQuery)
		})
	}
	row("RSS at the end, MB", func(v *ViewsRun) string {
		if v.RSS == 0 {
			return ""
		}
		return fmt.Sprintf("%.0f", mb(v.RSS))
	})
	tw.Flush()
	fmt.Fprintln(w)
}

// shapeTitle is a shape's description, its JS reduce suffix kept.
func shapeTitle(name string) string {
	base, suffix, _ := strings.Cut(name, " ")
	if t, ok := viewShapeTitles[base]; ok {
		return strings.TrimSpace(t + " " + suffix)
	}
	return name
}

// viewsTargets adds issue 39's targets when CouchDB ran beside settee
// serve: every first build at least as fast as CouchDB's, every shape's
// p50 faster.
func (r *Results) viewsTargets() {
	var serve, couch *ViewsRun
	for _, v := range r.Views {
		switch v.Contender {
		case "settee serve":
			serve = v
		case "couchdb":
			couch = v
		}
	}
	for _, w := range r.VDUWrites {
		if w.Server == "settee serve" {
			r.addTarget("views: writes with a validate_doc_update / without, settee serve", "<= 1.5x", w.Ratio, "x", w.Ratio <= 1.5)
		}
	}
	if serve == nil || couch == nil {
		return
	}
	for j := range min(len(serve.Builds), len(couch.Builds)) {
		v := ratio(serve.Builds[j].Seconds, couch.Builds[j].Seconds)
		r.addTarget("views: first build of "+serve.Builds[j].DDoc+", settee serve / CouchDB", "<= 1x", v, "x", v <= 1)
	}
	for j := range min(len(serve.Shapes), len(couch.Shapes)) {
		v := ratio(serve.Shapes[j].P50Ms, couch.Shapes[j].P50Ms)
		r.addTarget("views: "+serve.Shapes[j].Name+" p50, settee serve / CouchDB", "< 1x", v, "x", v < 1)
	}
}
