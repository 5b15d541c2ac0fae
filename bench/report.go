package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
)

func itoa(n int) string { return strconv.Itoa(n) }

// writeTable prints the run's figures as a Markdown table.
func writeTable(w io.Writer, r *Results) {
	m := r.Meta
	fmt.Fprintf(w, "Settee benchmark  %s\n", m.Date)
	if r.Pull != nil {
		fmt.Fprintf(w, "server: %s   docs: %d (seed %d)   pouchdb adapter: %s   ", m.Server, m.Docs, m.Seed, m.PouchAdapter)
	}
	fmt.Fprintf(w, "load average: %s -> %s   commit: %s\n", m.LoadAvgStart, m.LoadAvgEnd, m.Commit)
	if r.Pull != nil {
		writeReplicationTable(w, r)
	}
	writeLiveTable(w, r)
	writeFindTable(w, r)
	writeIndexWriteTable(w, r)
	writeViewsTable(w, r)
	writeVDUTable(w, r)
	writeUITable(w, r)
	writeIdleTable(w, r)
	writeReplTable(w, r)
	writeAttTables(w, r)
	writeTargets(w, r)
}

// writeReplicationTable prints the dataset and the replication phases.
func writeReplicationTable(w io.Writer, r *Results) {
	m := r.Meta
	d := r.Dataset
	fmt.Fprintf(w, "dataset: %d docs, %d leaves, %d revisions, %d conflicted, %d deleted, %d attachments (%.1f MB), bodies %.1f MB; loaded in %.1fs\n\n",
		d.Docs, d.Leaves, d.Revisions, d.Conflicted, d.Deleted, d.Attachments, mb(d.AttachmentBytes), mb(d.BodyBytes), r.LoadSeconds)

	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| phase\t contender\t seconds\t docs/s\t MB/s\t peak RSS MB\t CPU s\t server CPU s\t requests\t MB sent\t MB received\t docs read\t docs written\t")
	fmt.Fprintln(tw, "|---\t---\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t")
	row := func(phase, who string, ms *Measure) {
		if ms == nil {
			return
		}
		fmt.Fprintf(tw, "| %s\t %s\t %.2f\t %.0f\t %.1f\t %.1f\t %.2f\t %.2f\t %d\t %.1f\t %.1f\t %d\t %d\t\n", phase, who, ms.Seconds, ms.DocsPerSec, ms.MBPerSec,
			mb(ms.PeakRSS), ms.CPUSeconds, ms.ServerCPUSeconds, ms.Requests, mb(ms.BytesSent), mb(ms.BytesReceived), ms.DocsRead, ms.DocsWritten)
	}
	if p := r.Pull; p != nil {
		row("pull", "settee", p.Settee)
		row("pull", "pouchdb", p.PouchDB)
		row("pull", "settee, no store (the target discards)", p.NoStore)
		row("pull", "settee, encrypted store", p.Encrypted)
		if l := p.PullLimit; l != nil {
			fmt.Fprintf(tw, "| pull\t limit (stream %.2fs + SQLite insert %.2fs)\t %.2f\t %.0f\t %.1f\t \t %s\t %.2f\t %d\t \t %.1f\t %d\t \t\n",
				l.StreamSeconds, l.InsertSeconds, l.Seconds, float64(m.docsOrOne())/l.Seconds, mb(r.Dataset.payload())/l.Seconds, insertCPU(l), l.ServerCPUSeconds, l.Requests, mb(l.BytesReceived), l.Rows)
		}
	}
	if p := r.Push; p != nil {
		row("push", "settee", p.Settee)
		row("push", "pouchdb", p.PouchDB)
		row("push", "settee, encrypted store", p.Encrypted)
		if l := p.PushLimit; l != nil {
			fmt.Fprintf(tw, "| push\t limit (_bulk_docs new_edits=false)\t %.2f\t %.0f\t %.1f\t \t \t %.2f\t %d\t %.1f\t \t \t \t\n",
				l.Seconds, float64(m.docsOrOne())/l.Seconds, mb(r.Dataset.payload())/l.Seconds, l.ServerCPUSeconds, l.Requests, mb(l.BytesSent))
		}
	}
	if p := r.Noop; p != nil {
		row("no-op re-sync", "settee", p.Settee)
		row("no-op re-sync", "pouchdb", p.PouchDB)
	}
	if p := r.Incremental; p != nil {
		row(fmt.Sprintf("incremental (%d changed)", p.Changed), "settee", p.Settee)
		row(fmt.Sprintf("incremental (%d changed)", p.Changed), "pouchdb", p.PouchDB)
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// writeTargets prints the targets, the CPU ratios and the failures.
func writeTargets(w io.Writer, r *Results) {
	if len(r.Targets) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
		fmt.Fprintln(tw, "| target\t goal\t measured\t met\t")
		fmt.Fprintln(tw, "|---\t---\t---:\t---\t")
		for _, t := range r.Targets {
			met := "no"
			if t.Met {
				met = "yes"
			}
			fmt.Fprintf(tw, "| %s\t %s\t %.2f %s\t %s\t\n", t.Name, t.Goal, t.Measured, t.Unit, met)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	if ra := r.Ratios; ra.PullCPUPouchDBVsSettee > 0 || ra.PushCPUPouchDBVsSettee > 0 {
		fmt.Fprintf(w, "CPU seconds (client + server) PouchDB / Settee: pull %.2fx, push %.2fx; peak RSS Settee / PouchDB: pull %.2fx, push %.2fx\n\n",
			ra.PullCPUPouchDBVsSettee, ra.PushCPUPouchDBVsSettee, ra.PullRSSVsPouchDB, ra.PushRSSVsPouchDB)
	}
	if ra := r.Ratios; ra.PullTimeVsNoStore > 0 {
		fmt.Fprintf(w, "Pull vs the same pull with no store: %.2fx (the local store's share of the wall time)", ra.PullTimeVsNoStore)
		if ra.NoStoreVsStreamLimit > 0 {
			fmt.Fprintf(w, "; pull with no store vs the limit's higher bound: %.2fx (what the protocol's requests cost, whatever the store)", ra.NoStoreVsStreamLimit)
		}
		fmt.Fprint(w, "\n\n")
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "ERROR: %s\n", e)
	}
}

func (m Meta) docsOrOne() int {
	if m.BigAttachment > 0 {
		return 1
	}
	return m.Docs
}

// writeLiveTable prints the live workloads, one row per workload and hub.
func writeLiveTable(w io.Writer, r *Results) {
	if len(r.Live) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| workload\t hub\t devices\t writes\t seconds\t writes/s\t offered/s\t p50 ms\t p90 ms\t p99 ms\t max ms\t deliveries\t CPU s (devices)\t hub CPU s\t requests\t peak RSS MB (devices)\t")
	fmt.Fprintln(tw, "|---\t---\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t")
	for _, l := range r.Live {
		offered := ""
		if l.OfferedPerSec > 0 {
			offered = fmt.Sprintf("%.0f", l.OfferedPerSec)
		}
		workload := l.Workload
		if l.CheckpointSeconds > 0 {
			workload += fmt.Sprintf(" (checkpoint every %gs)", l.CheckpointSeconds)
		} else if l.CheckpointSeconds < 0 {
			workload += " (checkpoint every batch)"
		}
		fmt.Fprintf(tw, "| %s\t %s\t %d\t %d\t %.2f\t %.1f\t %s\t %.1f\t %.1f\t %.1f\t %.1f\t %d/%d\t %.2f\t %.2f\t %d\t %.1f\t\n",
			workload, l.Hub, l.Devices, l.Writes, l.Seconds, l.WritesPerSec, offered, l.P50Ms, l.P90Ms, l.P99Ms, l.MaxMs,
			l.Deliveries, l.Expected, l.CPUSeconds, l.HubCPUSeconds, l.Requests, mb(l.VmHWM))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// writeJSON writes the results to path, creating its directory.
func writeJSON(path string, r *Results) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// bar is one bar of the chart.
type bar struct {
	label string
	value float64
	color string
}

// writeSVG draws two bar groups: docs/s per contender and direction, and
// peak RSS per contender and direction.
func writeSVG(path string, r *Results) error {
	var rate, rss []bar
	colors := map[string]string{"settee": "#2b7bb9", "pouchdb": "#d9822b", "limit": "#7a7a7a"}
	add := func(dir string, d *Direction) {
		if d == nil {
			return
		}
		n := float64(r.Meta.docsOrOne())
		if d.Settee != nil {
			rate = append(rate, bar{dir + " settee", d.Settee.DocsPerSec, colors["settee"]})
			rss = append(rss, bar{dir + " settee", mb(d.Settee.PeakRSS), colors["settee"]})
		}
		if d.PouchDB != nil {
			rate = append(rate, bar{dir + " pouchdb", d.PouchDB.DocsPerSec, colors["pouchdb"]})
			rss = append(rss, bar{dir + " pouchdb", mb(d.PouchDB.PeakRSS), colors["pouchdb"]})
		}
		if l := d.LimitSeconds(); l > 0 {
			rate = append(rate, bar{dir + " limit", n / l, colors["limit"]})
		}
	}
	add("pull", r.Pull)
	add("push", r.Push)
	var lat []bar
	for _, l := range r.Live {
		c := colors["settee"]
		if l.Hub != "settee serve" {
			c = colors["limit"]
		}
		lat = append(lat, bar{l.Workload + " " + l.Hub, l.P99Ms, c})
	}

	var idle []bar
	for _, l := range r.Idle {
		c := colors["settee"]
		switch l.Client {
		case "pouchdb":
			c = colors["pouchdb"]
		case "settee (old)":
			c = colors["limit"]
		}
		idle = append(idle, bar{l.Client + " via " + l.Server, l.CPUPerMinute, c})
	}

	const width, rowH, left, right = 760, 26, 230, 130
	height := 70 + (len(rate)+len(rss)+len(lat)+len(idle))*rowH + 120
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="13">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	title := fmt.Sprintf("Settee vs PouchDB vs the limit: %d docs from %s, %s", r.Meta.docsOrOne(), strings.Fields(r.Meta.Server + " ?")[0], r.Meta.Date)
	if r.Pull == nil {
		title = "Settee: live sync through a hub, " + r.Meta.Date
		if len(lat) == 0 {
			title = "Settee: sync and reads, " + r.Meta.Date
		}
	}
	fmt.Fprintf(&b, `<text x="10" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	y := 40
	group := func(title, unit string, bars []bar) {
		fmt.Fprintf(&b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y+14, html.EscapeString(title))
		y += 22
		max := 0.0
		for _, br := range bars {
			if br.value > max {
				max = br.value
			}
		}
		for _, br := range bars {
			w := 0.0
			if max > 0 {
				w = br.value / max * float64(width-left-right)
			}
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`, left-8, y+16, html.EscapeString(br.label))
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`, left, y+3, w, rowH-6, br.color)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", float64(left)+w+6, y+16, html.EscapeString(barValue(br.value)+" "+unit))
			y += rowH
		}
		y += 10
	}
	if len(rate) > 0 {
		group("Throughput (higher is better)", "docs/s", rate)
		group("Peak RSS of the replicating process (lower is better)", "MB", rss)
	}
	if len(lat) > 0 {
		group("p99 write-to-other-device latency via the hub (lower is better)", "ms", lat)
	}
	if len(idle) > 0 {
		group("CPU of a continuous two-way sync with an idle database (lower is better)", "CPU-s/min", idle)
	}
	b.WriteString("</svg>\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// insertCPU is the limit's CPU column: its plain SQLite insert's CPU
// seconds, the stream's being the server's.
func insertCPU(l *pullLimit) string {
	if l.InsertCPUSeconds == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f (insert)", l.InsertCPUSeconds)
}

// barValue prints a bar's value: whole numbers from 100 up, three
// significant digits below (idle CPU seconds a minute are hundredths).
func barValue(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
