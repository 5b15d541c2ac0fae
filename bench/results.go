package main

// Results is what one harness run measured; it is written as JSON.
type Results struct {
	Meta    Meta         `json:"meta"`
	Dataset DatasetStats `json:"dataset"`
	// LoadSeconds is the time to load the dataset into the source database.
	LoadSeconds float64 `json:"load_seconds"`
	// ServerRSS is the CouchDB-compatible server's resident memory after
	// loading (0 for an external server).
	ServerRSS int64 `json:"server_rss_bytes,omitempty"`

	Pull        *Direction `json:"pull,omitempty"`
	Push        *Direction `json:"push,omitempty"`
	Noop        *Phase     `json:"noop_resync,omitempty"`
	Incremental *Phase     `json:"incremental,omitempty"`
	// Live holds the live workloads, one per workload and hub.
	Live []*LiveRun `json:"live,omitempty"`
	// Find holds the Mango queries on the pulled data, one per contender.
	Find []*FindRun `json:"find,omitempty"`
	// Lazy and Pending hold the lazy attachment and pending count phases.
	Lazy    []*LazyRun    `json:"lazy,omitempty"`
	Pending []*PendingRun `json:"pending,omitempty"`
	// UI holds the ui phase's pulls.
	UI []*UIRun `json:"ui,omitempty"`
	// Idle holds the idle phase's clients, per server.
	Idle []*IdleRun `json:"idle,omitempty"`
	// Replicator holds the replicator phase's hubs.
	Replicator []*ReplRun `json:"replicator,omitempty"`
	// IndexWrite holds phase index-write's modes.
	IndexWrite []*IndexWriteRun `json:"index_write,omitempty"`
	// Views holds phase views' contenders.
	Views []*ViewsRun `json:"views,omitempty"`
	// VDUWrites holds phase views' writes with and without a validator.
	VDUWrites []*VDUWrites `json:"vdu_writes,omitempty"`

	Ratios  Ratios   `json:"ratios"`
	Targets []Target `json:"targets"`
	// Checks lists the verifications that ran, and Errors what failed
	// (a contender that failed leaves its figures out).
	Checks []string `json:"checks"`
	Errors []string `json:"errors,omitempty"`
}

// Meta records where and how the run happened.
type Meta struct {
	Date          string  `json:"date"`
	Uname         string  `json:"uname"`
	CPU           string  `json:"cpu"`
	CPUs          int     `json:"cpus"`
	GoVersion     string  `json:"go_version"`
	NodeVersion   string  `json:"node_version"`
	Commit        string  `json:"commit"`
	Server        string  `json:"server"`
	Seed          uint64  `json:"seed"`
	Docs          int     `json:"docs"`
	BigAttachment int64   `json:"big_attachment_bytes,omitempty"`
	PouchAdapter  string  `json:"pouchdb_adapter"`
	WallSeconds   float64 `json:"wall_seconds"`
	// LoadAvg is /proc/loadavg at the start and at the end: on a shared
	// machine, wall times stretch with the load; CPU seconds do not.
	LoadAvgStart string `json:"loadavg_start"`
	LoadAvgEnd   string `json:"loadavg_end"`
}

// Direction holds one direction's contenders.
type Direction struct {
	Settee  *Measure `json:"settee,omitempty"`
	PouchDB *Measure `json:"pouchdb,omitempty"`
	// NoStore is our pull into a target that stores nothing (pull only).
	NoStore *Measure `json:"no_store,omitempty"`
	// Encrypted is Settee's run with an encrypted local store (the
	// "encrypted" contender), right after the plain one.
	Encrypted *Measure `json:"encrypted,omitempty"`
	// PullLimit or PushLimit, depending on the direction.
	PullLimit *pullLimit `json:"pull_limit,omitempty"`
	PushLimit *pushLimit `json:"push_limit,omitempty"`
}

// LimitSeconds returns the direction's limit time, or 0.
func (d *Direction) LimitSeconds() float64 {
	switch {
	case d == nil:
		return 0
	case d.PullLimit != nil:
		return d.PullLimit.Seconds
	case d.PushLimit != nil:
		return d.PushLimit.Seconds
	}
	return 0
}

// Measure is one contender's replication.
type Measure struct {
	// Seconds is the replication's own time, measured inside the process
	// around the replicate call (process start-up excluded).
	Seconds float64 `json:"seconds"`
	// ProcessSeconds is the child process's whole life.
	ProcessSeconds float64 `json:"process_seconds"`
	Docs           int     `json:"docs"`
	DocsPerSec     float64 `json:"docs_per_sec"`
	// MBPerSec is the dataset's bodies and attachment bytes per second
	// (pull and push only).
	MBPerSec float64 `json:"mb_per_sec,omitempty"`
	// PeakRSS is the process's peak resident set (VmHWM of
	// /proc/self/status, reported by the process as it ends).
	PeakRSS  int64 `json:"peak_rss_bytes"`
	Requests int64 `json:"requests"`
	// BytesSent and BytesReceived are socket bytes (headers included,
	// responses as compressed on the wire), counted the same way for
	// every contender.
	BytesSent     int64 `json:"bytes_sent"`
	BytesReceived int64 `json:"bytes_received"`
	// Body bytes after gzip decoding, as our couch client counts them.
	BodyBytesSent int64  `json:"body_bytes_sent,omitempty"`
	BodyBytesRecv int64  `json:"body_bytes_received,omitempty"`
	DocsRead      int64  `json:"docs_read"`
	DocsWritten   int64  `json:"docs_written"`
	CPUProfile    string `json:"cpu_profile,omitempty"`
	// ServerCPUProfile is settee serve's profile during the same run.
	ServerCPUProfile string `json:"server_cpu_profile,omitempty"`
	// CPUSeconds is the process's user+system CPU time; ServerCPUSeconds
	// the server's during the process's life (only for a server the
	// harness started). Server CPU close to Seconds means the server was
	// the bottleneck.
	CPUSeconds       float64 `json:"cpu_seconds"`
	ServerCPUSeconds float64 `json:"server_cpu_seconds,omitempty"`
}

// Phase is a re-sync measured for each contender.
type Phase struct {
	// Changed is the number of documents edited on the source before the
	// re-sync (0 for the no-op re-sync).
	Changed int      `json:"changed"`
	Settee  *Measure `json:"settee,omitempty"`
	PouchDB *Measure `json:"pouchdb,omitempty"`
}

// Ratios are the comparisons the targets are stated in.
type Ratios struct {
	PullVsPouchDBDocsPerSec float64 `json:"pull_vs_pouchdb_docs_per_sec,omitempty"`
	PullTimeVsLimit         float64 `json:"pull_time_vs_limit,omitempty"`
	// PullTimeVsStreamLimit is against the higher of the limit's stream
	// and insert (the pull targets' definition); PullTimeVsLimit against their sum.
	PullTimeVsStreamLimit float64 `json:"pull_time_vs_stream_limit,omitempty"`
	// PullCPUVsInsertCPU is the pulling process's CPU over the limit's
	// plain SQLite insert's: how much more than storing the bytes a pull
	// costs the device.
	PullCPUVsInsertCPU float64 `json:"pull_cpu_vs_insert_cpu,omitempty"`
	// PullTimeVsNoStore is the pull over the same pull into a target that
	// stores nothing: the local store's share of the wall time.
	PullTimeVsNoStore float64 `json:"pull_time_vs_no_store,omitempty"`
	// PullTimeEncrypted and PushTimeEncrypted are the encrypted store's
	// times over the plain store's (target: at most 1.2x).
	PullTimeEncrypted float64 `json:"pull_time_encrypted,omitempty"`
	PushTimeEncrypted float64 `json:"push_time_encrypted,omitempty"`
	// NoStoreVsStreamLimit is the pull with no store over the limit's
	// higher bound: what the protocol's requests cost against streaming
	// the winning revisions, whatever the store.
	NoStoreVsStreamLimit    float64 `json:"no_store_vs_stream_limit,omitempty"`
	PushVsPouchDBDocsPerSec float64 `json:"push_vs_pouchdb_docs_per_sec,omitempty"`
	PushTimeVsLimit         float64 `json:"push_time_vs_limit,omitempty"`
	PullRSSVsPouchDB        float64 `json:"pull_rss_vs_pouchdb,omitempty"`
	PushRSSVsPouchDB        float64 `json:"push_rss_vs_pouchdb,omitempty"`
	// CPU (client + server seconds) of PouchDB over ours: how much less
	// work a replication costs, whatever the machine's load.
	PullCPUPouchDBVsSettee float64 `json:"pull_cpu_pouchdb_vs_settee,omitempty"`
	PushCPUPouchDBVsSettee float64 `json:"push_cpu_pouchdb_vs_settee,omitempty"`
}

// Target is one stated goal and whether this run met it.
type Target struct {
	Name     string  `json:"name"`
	Goal     string  `json:"goal"`
	Measured float64 `json:"measured"`
	Unit     string  `json:"unit"`
	Met      bool    `json:"met"`
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// computeRatios fills Ratios and Targets from the measures.
// vsPouchDB compares one phase's Settee and PouchDB measures: our docs/s
// over theirs, our peak RSS over theirs, and their CPU (client and
// server) over ours.
func vsPouchDB(s, p *Measure) (docsPerSec, rss, cpu float64) {
	return ratio(s.DocsPerSec, p.DocsPerSec), ratio(float64(s.PeakRSS), float64(p.PeakRSS)),
		ratio(p.CPUSeconds+p.ServerCPUSeconds, s.CPUSeconds+s.ServerCPUSeconds)
}

func (r *Results) computeRatios() {
	r.Targets = nil
	defer r.findTargets()
	defer r.indexWriteTargets()
	defer r.viewsTargets()
	if p := r.Pull; p != nil && p.Settee != nil {
		if p.PouchDB != nil {
			ra := &r.Ratios
			ra.PullVsPouchDBDocsPerSec, ra.PullRSSVsPouchDB, ra.PullCPUPouchDBVsSettee = vsPouchDB(p.Settee, p.PouchDB)
			r.addTarget("pull docs/s vs PouchDB", ">= 3x", ra.PullVsPouchDBDocsPerSec, "x", ra.PullVsPouchDBDocsPerSec >= 3)
		}
		if l := p.LimitSeconds(); l > 0 {
			r.Ratios.PullTimeVsLimit = ratio(p.Settee.Seconds, l)
			r.addTarget("pull time vs limit (stream + insert)", "<= 1.5x", r.Ratios.PullTimeVsLimit, "x", r.Ratios.PullTimeVsLimit <= 1.5)
		}
		if l := p.PullLimit; l != nil && l.higherBound() > 0 {
			// The pull's limit: a pipelined pull overlaps the transfer and
			// the writes, so the bound is the higher of the two, not their
			// sum.
			r.Ratios.PullTimeVsStreamLimit = ratio(p.Settee.Seconds, l.higherBound())
			r.addTarget("pull time vs stream limit (higher of stream, insert)", "<= 1.15x", r.Ratios.PullTimeVsStreamLimit, "x", r.Ratios.PullTimeVsStreamLimit <= 1.15)
			r.Ratios.PullCPUVsInsertCPU = ratio(p.Settee.CPUSeconds, l.InsertCPUSeconds)
		}
		if e := p.Encrypted; e != nil && p.Settee.Seconds > 0 {
			r.Ratios.PullTimeEncrypted = ratio(e.Seconds, p.Settee.Seconds)
			r.addTarget("pull time, encrypted store vs plain", "<= 1.2x", r.Ratios.PullTimeEncrypted, "x", r.Ratios.PullTimeEncrypted <= 1.2)
		}
		if ns := p.NoStore; ns != nil && ns.Seconds > 0 {
			r.Ratios.PullTimeVsNoStore = ratio(p.Settee.Seconds, ns.Seconds)
			if l := p.PullLimit; l != nil && l.higherBound() > 0 {
				r.Ratios.NoStoreVsStreamLimit = ratio(ns.Seconds, l.higherBound())
			}
		}
		if r.Meta.BigAttachment == 0 && r.Meta.Docs >= 10000 {
			// Battery: the pulling process's CPU per 100,000
			// documents; below 10,000 its start-up would weigh.
			v := p.Settee.CPUSeconds * 100000 / float64(r.Meta.Docs)
			r.addTarget("pull client CPU s per 100k docs", "<= 2.5 s", v, "s", v <= 2.5)
		}
		switch {
		case r.Meta.BigAttachment > 0:
			r.addTarget("pull peak RSS, big attachment", "<= 100 MB", mb(p.Settee.PeakRSS), "MB", p.Settee.PeakRSS <= 100<<20)
		case r.Meta.Docs >= 1000000:
			// The large-store targets: 1M docs at >= 10,000 docs/s in <= 50 MB.
			r.addTarget("pull docs/s, 1M docs", ">= 10000", p.Settee.DocsPerSec, "docs/s", p.Settee.DocsPerSec >= 10000)
			r.addTarget("pull peak RSS, 1M docs", "<= 50 MB", mb(p.Settee.PeakRSS), "MB", p.Settee.PeakRSS <= 50<<20)
		}
	}
	if p := r.Push; p != nil && p.Settee != nil {
		if e := p.Encrypted; e != nil && p.Settee.Seconds > 0 {
			r.Ratios.PushTimeEncrypted = ratio(e.Seconds, p.Settee.Seconds)
			r.addTarget("push time, encrypted store vs plain", "<= 1.2x", r.Ratios.PushTimeEncrypted, "x", r.Ratios.PushTimeEncrypted <= 1.2)
		}
		if p.PouchDB != nil {
			ra := &r.Ratios
			ra.PushVsPouchDBDocsPerSec, ra.PushRSSVsPouchDB, ra.PushCPUPouchDBVsSettee = vsPouchDB(p.Settee, p.PouchDB)
			r.addTarget("push docs/s vs PouchDB", ">= 3x", ra.PushVsPouchDBDocsPerSec, "x", ra.PushVsPouchDBDocsPerSec >= 3)
		}
		if l := p.LimitSeconds(); l > 0 {
			r.Ratios.PushTimeVsLimit = ratio(p.Settee.Seconds, l)
			r.addTarget("push time vs limit", "<= 1.15x", r.Ratios.PushTimeVsLimit, "x", r.Ratios.PushTimeVsLimit <= 1.15)
		}
		if r.Meta.BigAttachment > 0 {
			r.addTarget("push peak RSS, big attachment", "<= 100 MB", mb(p.Settee.PeakRSS), "MB", p.Settee.PeakRSS <= 100<<20)
		}
	}
	if n := r.Noop; n != nil && n.Settee != nil {
		r.addTarget("no-op re-sync requests", "<= 5", float64(n.Settee.Requests), "requests", n.Settee.Requests <= 5)
	}
	if in := r.Incremental; in != nil && in.Settee != nil {
		r.addTarget("incremental: docs fetched = changed", "= "+itoa(in.Changed), float64(in.Settee.DocsRead), "docs", in.Settee.DocsRead == int64(in.Changed))
	}
	r.liveTargets()
	r.idleTargets()
	r.replTargets()
	r.uiTargets()
}

func (r *Results) addTarget(name, goal string, v float64, unit string, met bool) {
	r.Targets = append(r.Targets, Target{Name: name, Goal: goal, Measured: v, Unit: unit, Met: met})
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }
