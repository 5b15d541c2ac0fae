package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// attPhaseNames run only when named: the lazy attachment and pending
// count workloads, which bring their own data.
var attPhaseNames = []string{"lazy", "pending"}

// attConfig is the flags of the lazy and pending phases.
type attConfig struct {
	// Peers are the servers they run against: settee (settee serve,
	// started here), pouchdb (pouchdb-server, started here), couchdb (-couch).
	Peers       map[string]bool
	LazyDocs    int
	LazyAtts    int
	LazyAttSize int64
	LazyFetch   int
	LazyRounds  int
	PendingDocs int
}

// attFlags registers the phases' flags; the returned func checks them
// once parsed.
func attFlags(fs *flag.FlagSet, cfg *config) func() error {
	var peers, size string
	fs.StringVar(&peers, "peers", "settee", "lazy, pending: servers to run against: settee (settee serve), pouchdb (pouchdb-server in memory), couchdb (the -couch server)")
	fs.IntVar(&cfg.LazyDocs, "lazy-docs", 10000, "lazy: documents in the attachment set")
	fs.IntVar(&cfg.LazyAtts, "lazy-atts", 100, "lazy: documents of the set carrying an attachment")
	fs.StringVar(&size, "lazy-att-size", "100KB", "lazy: size of each attachment")
	fs.IntVar(&cfg.LazyFetch, "lazy-fetch", 10, "lazy: bodies fetched on demand after the lazy pull")
	fs.IntVar(&cfg.LazyRounds, "lazy-rounds", 3, "lazy: eager and lazy pulls of the set, each into a fresh store; the median counts")
	fs.IntVar(&cfg.PendingDocs, "pending-docs", 100000, "pending: documents pushed")
	return func() error {
		var err error
		if cfg.Peers, err = parseSet(peers, []string{"settee", "pouchdb", "couchdb"}); err != nil {
			return fmt.Errorf("-peers: %w", err)
		}
		if cfg.Peers["couchdb"] && cfg.Couch == "" {
			return fmt.Errorf("-peers couchdb needs -couch")
		}
		if cfg.LazyAttSize, err = parseSize(size); err != nil {
			return fmt.Errorf("-lazy-att-size: %w", err)
		}
		if cfg.LazyDocs < 1 || cfg.LazyAtts < 1 || cfg.LazyFetch < 0 || cfg.PendingDocs < 1 || cfg.LazyRounds < 1 {
			return fmt.Errorf("-lazy-docs, -lazy-atts, -lazy-rounds and -pending-docs must be positive, -lazy-fetch not negative")
		}
		return nil
	}
}

// attPhases runs the lazy and pending phases against each peer of -peers.
func (b *bench) attPhases(ctx context.Context) error {
	cfg := b.cfg
	var peers []hubServer
	for _, name := range []string{"settee", "pouchdb", "couchdb"} {
		if !cfg.Peers[name] {
			continue
		}
		switch name {
		case "settee":
			b.logf("lazy, pending: starting settee serve")
			s, err := startSetteeServer(ctx, filepath.Join(b.dir, "att-serve-data"), "")
			if err != nil {
				return fmt.Errorf("settee serve: %w", err)
			}
			defer s.Stop()
			peers = append(peers, hubServer{name: "settee serve", url: s.URL, cpu: s.CPU})
		case "pouchdb":
			b.logf("lazy, pending: starting pouchdb-server (in memory)")
			s, err := startPouchServer(ctx, cfg.Root, b.dir)
			if err != nil {
				return fmt.Errorf("pouchdb-server: %w", err)
			}
			defer s.Stop()
			peers = append(peers, hubServer{name: "pouchdb-server", url: s.URL, cpu: s.CPU})
		case "couchdb":
			peers = append(peers, hubServer{name: "couchdb", url: strings.TrimRight(cfg.Couch, "/"), cpu: b.serverCPU})
		}
	}
	if cfg.Phases["lazy"] {
		if err := b.lazyPhase(ctx, peers); err != nil {
			return err
		}
	}
	if cfg.Phases["pending"] {
		if err := b.pendingPhase(ctx, peers); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// writeAttTables prints the lazy and pending phases' figures.
func writeAttTables(w io.Writer, r *Results) {
	if len(r.Lazy) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
		fmt.Fprintln(tw, "| attachment set\t peer\t pull\t seconds\t requests\t MB received\t bodies stored\t lazy/eager bytes\t lazy/eager time\t")
		fmt.Fprintln(tw, "|---\t---\t---\t---:\t---:\t---:\t---:\t---:\t---:\t")
		for _, l := range r.Lazy {
			set := fmt.Sprintf("%d docs, %d x %.0f KB (median of %d)", l.Docs, l.Attachments, float64(l.AttachmentBytes)/float64(max(1, l.Attachments))/1024, l.Rounds)
			for _, p := range []struct {
				name string
				m    *lazyRep
			}{{"eager", l.Eager}, {"lazy", l.Lazy}} {
				br, tr := "", ""
				if p.name == "lazy" {
					br, tr = fmt.Sprintf("%.4f", l.BytesRatio), fmt.Sprintf("%.2f", l.SecondsRatio)
				}
				fmt.Fprintf(tw, "| %s\t %s\t %s\t %.2f\t %d\t %.2f\t %d\t %s\t %s\t\n", set, l.Peer, p.name, p.m.Seconds, p.m.Requests, mb(p.m.BytesReceived), p.m.Downloaded, br, tr)
			}
			if f := l.Fetch; f != nil {
				fmt.Fprintf(tw, "| %s\t %s\t fetch %d on demand\t %.2f (%.1f ms each)\t %d\t %.2f\t +%d\t \t \t\n", set, l.Peer, f.N, f.Seconds, f.MsPerFetch, f.Requests, mb(f.BytesReceived), f.N)
			}
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	if len(r.Pending) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
		fmt.Fprintln(tw, "| push with pending checks\t peer\t seconds\t events\t progress events\t checked vs target\t first pending\t missing at end\t mismatches\t")
		fmt.Fprintln(tw, "|---\t---\t---:\t---:\t---:\t---:\t---:\t---:\t---:\t")
		for _, p := range r.Pending {
			fmt.Fprintf(tw, "| %d docs, %s\t %s\t %.1f\t %d\t %d\t %d\t %d\t %d\t %d\t\n", p.Docs, p.Push, p.Peer, p.Seconds, p.Events, p.ProgressEvents, p.Checked, p.FirstPending, p.FinalMissing, p.Mismatches)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
}
