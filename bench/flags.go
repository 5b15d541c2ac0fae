package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// config is the harness's parsed flags.
type config struct {
	Docs           int
	Seed           uint64
	Couch          string
	Out, SVG       string
	WorkDir        string
	Keep           bool
	BigAttachment  int64
	Phases         map[string]bool
	Contenders     map[string]bool
	PouchAdapter   string
	PouchBatchSize int
	CPUProfileDir  string
	Root           string
	Timeout        time.Duration
	Verbose        bool
	Server         string
	CouchPID       int
	// Live workloads (phases live and hub).
	LiveWrites int
	HubDevices int
	HubRate    float64
	HubSeconds float64
	// LiveCheckpoint is the devices' CheckpointInterval (0: the default).
	LiveCheckpoint time.Duration
	// IdleSeconds is the idle phase's measured window; IdleOld an older
	// settee CLI binary measured beside this commit's.
	IdleSeconds float64
	IdleOld     string
	// UIRounds and UIThrottle: the ui phase's rounds and its throttled
	// pull's sync.Options.Throttle.
	UIRounds   int
	UIThrottle int
	// UIIdleSeconds is how long the reads run on the full store after
	// each pull with reads.
	UIIdleSeconds float64
	// ReplDBs, ReplSeconds and ReplSamples: the replicator phase's
	// databases (and _replicator documents), idle window in seconds, and
	// write-to-upstream latency samples.
	ReplDBs     int
	ReplSeconds float64
	ReplSamples int
	// ReplBaseline is the replicator phase's window without jobs (0: none).
	ReplBaseline float64
	// FindQueries is how many queries of each shape phase find times.
	FindQueries int
	// ViewQueries is how many queries of each shape phase views times.
	ViewQueries int
	// VDUWrites is how many new documents phase views writes to each
	// server without and with a validate_doc_update (0: none).
	VDUWrites int
	// The lazy and pending phases (lazy_phases.go).
	attConfig
	// DBPrefix names the server's databases (<prefix>-src, ...), so runs
	// sharing one CouchDB do not collide.
	DBPrefix string
}

var allPhases = []string{"pull", "push", "noop", "incremental"}

// livePhaseNames run only when asked for: they measure latency, not a
// replication of the dataset.
var livePhaseNames = []string{"live", "hub"}

// extraPhaseNames also run only when named: find queries the pulled stores
// (it implies pull, and runs after the replication phases, so that its
// index design documents are not pushed).
// index-write (only when named) needs no server: it writes the dataset
// into local stores without and with indexes.
// ui (only when named, implies pull) pulls into a store with an index while the app's reads run every 5 ms; idle (only when named) measures continuous two-way syncs with idle
// databases; ui (only when named) times reads during a pull.
// views (only when named) times JavaScript views on settee serve, in
// process and, with -couch, on CouchDB.
// replicator (only when named) measures the _replicator jobs of a hub
// (replicator.go).
var extraPhaseNames = []string{"find", "index-write", "idle", "ui", "views", "replicator"}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{}
	var phases, contenders, big string
	fs.IntVar(&cfg.Docs, "docs", 100000, "number of generated documents")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the generated dataset")
	fs.StringVar(&cfg.Couch, "couch", "", "CouchDB-compatible server root URL (with credentials if needed); default: start an in-memory pouchdb-server")
	fs.StringVar(&cfg.DBPrefix, "db-prefix", "bench", "prefix of the databases the run creates on the server (<prefix>-src, <prefix>-push-settee, ...): give each run sharing a CouchDB its own")
	fs.StringVar(&cfg.Server, "server", "pouchdb", "server to start when -couch is not given: pouchdb (pouchdb-server in memory) or settee (our own server over SQLite files)")
	fs.StringVar(&cfg.Out, "out", "bench-out/results.json", "where to write the results as JSON")
	fs.StringVar(&cfg.SVG, "svg", "", "where to write the chart (default: next to -out, .svg)")
	fs.StringVar(&cfg.WorkDir, "workdir", "", "directory for the local stores (default: a temporary directory, removed at the end)")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the work directory and the server's databases")
	fs.StringVar(&big, "big-attachment", "", "instead of -docs: one document with an attachment of this size (e.g. 1GB, 200MB)")
	fs.StringVar(&phases, "phases", strings.Join(allPhases, ","), "phases to run: pull,push,noop,incremental (push, noop and incremental imply pull); live,hub (only when named) run the live workloads against settee serve and, with -couch, CouchDB; find (only when named, implies pull) times Mango queries on the pulled stores and the server; index-write (only when named) writes the dataset into local stores without and with 3 indexes; ui (only when named, implies pull) pulls into a store with an index while the app's reads run every 5 ms; idle (only when named) measures continuous two-way syncs of settee's CLI and PouchDB with idle databases on settee serve, pouchdb-server and -couch; lazy,pending (only when named) run against -peers; replicator (only when named) measures -repl-dbs continuous _replicator jobs to one upstream on settee serve and, with -couch (a CouchDB of the run's own, its pid in -couch-pid), on CouchDB's scheduler; views (only when named) loads the dataset into settee serve, a store in process (contender settee) and -couch, and times JavaScript views' builds, incremental updates and queries")
	fs.StringVar(&contenders, "contenders", "settee,pouchdb,limit", "contenders to run: settee,pouchdb,limit; nostore (only when named) pulls with our replicator into a target that stores nothing, the pull's cost without the local store; encrypted (only when named) pulls and pushes again with an encrypted local store, right after settee")
	fs.StringVar(&cfg.PouchAdapter, "pouchdb-adapter", "leveldb", "PouchDB's local adapter: leveldb (on disk, what a Node app uses) or memory")
	fs.IntVar(&cfg.PouchBatchSize, "pouchdb-batch-size", 0, "PouchDB's batch_size (0: its default, 100)")
	fs.StringVar(&cfg.CPUProfileDir, "cpuprofile-dir", "", "write CPU profiles of our replicator's children (pull.pprof, push.pprof) here")
	fs.StringVar(&cfg.Root, "root", ".", "the repository (or a directory below it)")
	fs.DurationVar(&cfg.Timeout, "timeout", 3*time.Hour, "give up after this long")
	fs.IntVar(&cfg.CouchPID, "couch-pid", 0, "with -couch: the server's process id (beam.smp), to report its CPU seconds")
	fs.IntVar(&cfg.LiveWrites, "live-writes", 1000, "live: writes by device A, each waited for on device B")
	fs.IntVar(&cfg.HubDevices, "hub-devices", 20, "hub: devices in continuous two-way sync with the hub")
	fs.Float64Var(&cfg.HubRate, "hub-rate", 5, "hub: writes per second by each device")
	fs.Float64Var(&cfg.HubSeconds, "hub-seconds", 20, "hub: how long the devices write")
	fs.DurationVar(&cfg.LiveCheckpoint, "live-checkpoint-interval", 0, "live, hub: the devices' sync.Options.CheckpointInterval (0: sync's default for continuous replications, every 5 s; negative: after every batch)")
	fs.Float64Var(&cfg.IdleSeconds, "idle-seconds", 60, "idle: how long the idle syncs are measured, in seconds")
	fs.StringVar(&cfg.IdleOld, "idle-old", "", "idle: an older settee CLI binary to measure beside this commit's (before/after)")
	fs.IntVar(&cfg.UIRounds, "ui-rounds", 2, "ui: rounds of the pulls (Settee: alone, with reads, throttled with reads; PouchDB: alone, with reads), their order alternating")
	fs.IntVar(&cfg.UIThrottle, "ui-throttle", 2000, "ui: the throttled pull's sync.Options.Throttle, documents a second")
	fs.Float64Var(&cfg.UIIdleSeconds, "ui-idle-seconds", 5, "ui: how long the reads run on the full, idle store after each pull with reads (the idle baseline)")
	fs.IntVar(&cfg.ReplDBs, "repl-dbs", 20, "replicator: databases on the hub, each with a continuous _replicator document to the upstream")
	fs.Float64Var(&cfg.ReplSeconds, "repl-seconds", 60, "replicator: the idle window over which the hub's CPU is measured, in seconds")
	fs.Float64Var(&cfg.ReplBaseline, "repl-baseline-seconds", 30, "replicator: the window over which the hub's CPU is measured with its databases and no jobs yet, in seconds (0: none)")
	fs.IntVar(&cfg.ReplSamples, "repl-samples", 40, "replicator: writes on the hub timed until they arrive upstream")
	fs.IntVar(&cfg.FindQueries, "find-queries", 200, "find: queries of each shape timed per contender")
	fs.IntVar(&cfg.ViewQueries, "view-queries", 200, "views: queries of each shape timed per contender")
	fs.IntVar(&cfg.VDUWrites, "vdu-writes", 5000, "views: new documents written to each server without and with a validate_doc_update, in alternating batches of 100 (0: none)")
	fs.BoolVar(&cfg.Verbose, "v", false, "copy the replicating processes' stderr to stderr")
	checkAtt := attFlags(fs, cfg)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if cfg.Docs < 1 {
		return nil, fmt.Errorf("-docs must be positive")
	}
	if big != "" {
		n, err := parseSize(big)
		if err != nil {
			return nil, err
		}
		cfg.BigAttachment = n
	}
	if err := checkAtt(); err != nil {
		return nil, err
	}
	var err error
	if cfg.Phases, err = parseSet(phases, slices.Concat(allPhases, livePhaseNames, extraPhaseNames, attPhaseNames)); err != nil {
		return nil, fmt.Errorf("-phases: %w", err)
	}
	if cfg.Contenders, err = parseSet(contenders, []string{"settee", "pouchdb", "limit", "nostore", "encrypted"}); err != nil {
		return nil, fmt.Errorf("-contenders: %w", err)
	}
	if cfg.UIRounds < 1 || cfg.UIThrottle < 1 || cfg.UIIdleSeconds <= 0 {
		return nil, fmt.Errorf("-ui-rounds, -ui-throttle and -ui-idle-seconds must be positive")
	}
	if cfg.Phases["push"] || cfg.Phases["noop"] || cfg.Phases["incremental"] || cfg.Phases["find"] || cfg.Phases["ui"] {
		cfg.Phases["pull"] = true
	}
	if cfg.BigAttachment > 0 {
		delete(cfg.Phases, "incremental")
	}
	if cfg.IdleSeconds < 1 {
		return nil, fmt.Errorf("-idle-seconds must be at least 1")
	}
	if cfg.ViewQueries < viewChecked {
		return nil, fmt.Errorf("-view-queries must be at least %d", viewChecked)
	}
	if cfg.ReplDBs < 1 || cfg.ReplSeconds < 1 || cfg.ReplSamples < 1 || cfg.ReplBaseline < 0 {
		return nil, fmt.Errorf("-repl-dbs and -repl-samples must be positive, -repl-seconds at least 1, -repl-baseline-seconds not negative")
	}
	if cfg.FindQueries < findChecked {
		return nil, fmt.Errorf("-find-queries must be at least %d", findChecked)
	}
	if cfg.LiveWrites < 1 || cfg.HubDevices < 2 || cfg.HubRate <= 0 || cfg.HubSeconds <= 0 || cfg.HubRate*cfg.HubSeconds < 0.5 {
		return nil, fmt.Errorf("-live-writes must be positive, -hub-devices at least 2, and -hub-rate x -hub-seconds at least 1")
	}
	if cfg.Server != "pouchdb" && cfg.Server != "settee" {
		return nil, fmt.Errorf("-server must be pouchdb or settee")
	}
	if cfg.PouchAdapter != "leveldb" && cfg.PouchAdapter != "memory" {
		return nil, fmt.Errorf("-pouchdb-adapter must be leveldb or memory")
	}
	if cfg.SVG == "" {
		cfg.SVG = strings.TrimSuffix(cfg.Out, filepath.Ext(cfg.Out)) + ".svg"
	}
	if cfg.Root, err = repoRoot(cfg.Root); err != nil {
		return nil, err
	}
	return cfg, nil
}

func parseSet(s string, allowed []string) (map[string]bool, error) {
	set := map[string]bool{}
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || a == v
		}
		if !ok {
			return nil, fmt.Errorf("unknown %q (allowed: %s)", v, strings.Join(allowed, ","))
		}
		set[v] = true
	}
	return set, nil
}

// parseSize parses sizes such as 1GB, 200MB, 64KB or 1000 (bytes), in
// powers of 1024.
func parseSize(s string) (int64, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, suf := range []struct {
		s string
		m int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(u, suf.s) {
			u, mult = strings.TrimSpace(strings.TrimSuffix(u, suf.s)), suf.m
			break
		}
	}
	n, err := strconv.ParseFloat(u, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return int64(n * float64(mult)), nil
}
