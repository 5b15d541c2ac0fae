package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/settee/settee/internal/buildinfo"
)

// bench is one harness run in progress.
type bench struct {
	cfg    *config
	ds     *Dataset
	log    io.Writer
	res    *Results
	server string       // root URL
	src    string       // source database URL
	dir    string       // work directory
	srv    *pouchServer // nil for an external server
	// local stores filled by the pulls
	setteeDB, pouchDir string
}

func runBench(ctx context.Context, cfg *config, log io.Writer) (*Results, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	began := time.Now()
	b := &bench{cfg: cfg, log: log, ds: &Dataset{Seed: cfg.Seed, Docs: cfg.Docs, BigAttachment: cfg.BigAttachment}}
	b.res = &Results{Meta: meta(cfg)}

	b.dir = cfg.WorkDir
	if b.dir == "" {
		d, err := os.MkdirTemp("", "settee-bench-")
		if err != nil {
			return nil, err
		}
		b.dir = d
		if !cfg.Keep {
			defer os.RemoveAll(d)
		}
	} else if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return nil, err
	}

	b.server = strings.TrimRight(cfg.Couch, "/")
	if b.server == "" && !cfg.Phases["pull"] {
		b.res.Meta.Server = "none (local and live workloads only)"
	} else if b.server == "" {
		var s *pouchServer
		var err error
		if cfg.Server == "settee" {
			b.logf("starting settee's server (package server over localdb files)")
			s, err = startSetteeServer(ctx, filepath.Join(b.dir, "server-data"), cfg.CPUProfileDir)
			b.res.Meta.Server = "settee server (package server, SQLite files; started by the harness)"
		} else {
			b.logf("starting pouchdb-server (in memory)")
			s, err = startPouchServer(ctx, cfg.Root, b.dir)
			b.res.Meta.Server = "pouchdb-server 4.2.0 --in-memory (started by the harness)"
		}
		if err != nil {
			return nil, err
		}
		defer s.Stop()
		b.server = s.URL
		b.srv = s
		defer func() { b.res.ServerRSS = s.RSS() }()
	} else {
		b.res.Meta.Server = redact(b.server)
	}
	b.src = b.server + "/" + b.cfg.DBPrefix + "-src"
	b.setteeDB = filepath.Join(b.dir, "settee.db")
	b.pouchDir = filepath.Join(b.dir, "pouchdb-"+cfg.PouchAdapter)

	var err error
	if cfg.Phases["pull"] {
		err = b.phases(ctx)
	}
	if err == nil && cfg.Phases["find"] {
		b.findPhase(ctx)
	}
	if err == nil && cfg.Phases["views"] {
		err = b.viewsPhase(ctx)
	}
	if err == nil && cfg.Phases["index-write"] {
		b.indexWritePhase(ctx)
	}
	if err == nil && (cfg.Phases["live"] || cfg.Phases["hub"]) {
		err = b.livePhases(ctx)
	}
	if err == nil && cfg.Phases["ui"] {
		err = b.uiPhase(ctx)
	}
	if err == nil && cfg.Phases["idle"] {
		err = b.idlePhase(ctx)
	}
	if err == nil && cfg.Phases["replicator"] {
		err = b.replicatorPhase(ctx)
	}
	if err == nil && (cfg.Phases["lazy"] || cfg.Phases["pending"]) {
		err = b.attPhases(ctx)
	}
	b.res.computeRatios()
	b.res.Meta.WallSeconds = time.Since(began).Seconds()
	b.res.Meta.LoadAvgEnd = loadAvg()
	if !cfg.Keep && cfg.Phases["pull"] {
		for _, db := range []string{"-src", "-push-settee", "-push-pouchdb", "-push-limit"} {
			_ = deleteDB(context.Background(), b.server+"/"+cfg.DBPrefix+db)
		}
	}
	return b.res, err
}

// verbose is where the children's stderr goes besides the error report.
func (b *bench) verbose() io.Writer {
	if b.cfg.Verbose {
		return b.log
	}
	return nil
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// fail records a failed contender or check; the run goes on.
func (b *bench) fail(what string, err error) {
	msg := fmt.Sprintf("%s: %v", what, err)
	b.logf("FAILED %s", msg)
	b.res.Errors = append(b.res.Errors, msg)
}

func (b *bench) check(what string) {
	b.logf("ok: %s", what)
	b.res.Checks = append(b.res.Checks, what)
}

func (b *bench) phases(ctx context.Context) error {
	cfg := b.cfg
	b.logf("loading %d documents (seed %d) into %s", b.ds.Count(), cfg.Seed, redact(b.src))
	if err := createDB(ctx, b.src); err != nil {
		return err
	}
	load, err := loadDataset(ctx, b.ds, b.src)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	b.res.Dataset = load.Stats
	b.res.LoadSeconds = load.SendTime.Seconds()
	if err := b.checkRemote(ctx, b.src, "source"); err != nil {
		return err
	}
	n := b.ds.Count()
	if cfg.Phases["pull"] {
		b.res.Pull = &Direction{}
		if cfg.Contenders["limit"] {
			b.logf("pull: limit")
			cpu0 := b.serverCPU()
			l, err := measurePullLimit(ctx, b.ds, b.src, b.dir)
			if err != nil {
				b.fail("pull limit", err)
			} else {
				l.ServerCPUSeconds = b.serverCPU() - cpu0 // stream and insert: the server works during the stream only
				b.res.Pull.PullLimit = l
			}
		}
		if cfg.Contenders["nostore"] {
			b.res.Pull.NoStore = b.settee(ctx, "pull", n, "pull-nostore.pprof", "--remote", b.src, "--no-store")
		}
		if cfg.Contenders["settee"] {
			_ = os.Remove(b.setteeDB)
			b.res.Pull.Settee = b.settee(ctx, "pull", n, "pull.pprof")
			if b.res.Pull.Settee != nil {
				if err := verifyLocal(ctx, b.setteeDB, b.src, b.ds, &b.res.Dataset); err != nil {
					b.fail("settee pull: verify the local store", err)
				} else {
					b.check("settee pull: the local store has the source's documents, winners, conflicts and attachment bytes")
				}
			}
		}
		if cfg.Contenders["encrypted"] {
			removeStore(b.setteeDB + ".enc")
			b.res.Pull.Encrypted = b.settee(ctx, "pull", n, "pull-enc.pprof", "--remote", b.src, "--local", b.setteeDB+".enc", "--key", benchKey)
		}
		if cfg.Contenders["pouchdb"] {
			_ = os.RemoveAll(b.pouchDir)
			b.res.Pull.PouchDB = b.pouch(ctx, "pull", b.src, n)
			if m := b.res.Pull.PouchDB; m != nil {
				b.checkCount("pouchdb pull: revisions written", m.DocsWritten, int64(b.res.Dataset.Leaves))
			}
		}
	}
	if cfg.Phases["push"] {
		b.res.Push = &Direction{}
		if cfg.Contenders["limit"] {
			b.logf("push: limit")
			target := b.server + "/" + cfg.DBPrefix + "-push-limit"
			cpu0 := b.serverCPU()
			l, err := measurePushLimit(ctx, b.ds, target)
			if err != nil {
				b.fail("push limit", err)
			} else {
				l.ServerCPUSeconds = b.serverCPU() - cpu0
				b.res.Push.PushLimit = l
			}
			_ = deleteDB(ctx, target)
		}
		if cfg.Contenders["settee"] && b.res.Pull.Settee != nil {
			target := b.server + "/" + cfg.DBPrefix + "-push-settee"
			if err := createDB(ctx, target); err != nil {
				return err
			}
			b.res.Push.Settee = b.settee(ctx, "push", n, "push.pprof", "--remote", target)
			if b.res.Push.Settee != nil {
				if err := b.checkRemote(ctx, target, "settee push target"); err == nil {
					if err := compareWinners(ctx, b.src, target); err != nil {
						b.fail("settee push: compare winners with the source", err)
					} else {
						b.check("settee push: the target's winners equal the source's")
					}
					if n, err := checkRemoteAttachments(ctx, target, b.ds, 20); err != nil {
						b.fail("settee push: attachments on the target", err)
					} else {
						b.check(fmt.Sprintf("settee push: %d attachments on the target have the generated bytes", n))
					}
				}
			}
			if !cfg.Keep {
				_ = deleteDB(ctx, target)
			}
		}
		if cfg.Contenders["encrypted"] && b.res.Pull.Encrypted != nil {
			target := b.server + "/" + cfg.DBPrefix + "-push-encrypted"
			if err := createDB(ctx, target); err != nil {
				return err
			}
			b.res.Push.Encrypted = b.settee(ctx, "push", n, "push-enc.pprof", "--remote", target, "--local", b.setteeDB+".enc", "--key", benchKey)
			if !cfg.Keep {
				_ = deleteDB(ctx, target)
			}
		}
		if cfg.Contenders["pouchdb"] && b.res.Pull.PouchDB != nil {
			target := b.server + "/" + cfg.DBPrefix + "-push-pouchdb"
			if err := createDB(ctx, target); err != nil {
				return err
			}
			b.res.Push.PouchDB = b.pouch(ctx, "push", target, n)
			if b.res.Push.PouchDB != nil {
				_ = b.checkRemote(ctx, target, "pouchdb push target")
			}
			if !cfg.Keep {
				_ = deleteDB(ctx, target)
			}
		}
	}
	if cfg.Phases["noop"] {
		b.res.Noop = &Phase{}
		if cfg.Contenders["settee"] && b.res.Pull.Settee != nil {
			b.res.Noop.Settee = b.settee(ctx, "pull", 0, "")
			if m := b.res.Noop.Settee; m != nil {
				b.checkCount("settee no-op re-sync: revisions fetched", m.DocsRead, 0)
			}
		}
		if cfg.Contenders["pouchdb"] && b.res.Pull.PouchDB != nil {
			b.res.Noop.PouchDB = b.pouch(ctx, "pull", b.src, 0)
			if m := b.res.Noop.PouchDB; m != nil {
				b.checkCount("pouchdb no-op re-sync: revisions fetched", m.DocsRead, 0)
			}
		}
	}
	if cfg.Phases["incremental"] {
		changed := b.ds.ChangedCount()
		b.res.Incremental = &Phase{Changed: changed}
		b.logf("incremental: editing %d documents on the source", changed)
		if _, err := loadEdits(ctx, b.ds, b.src); err != nil {
			return fmt.Errorf("incremental edits: %w", err)
		}
		if cfg.Contenders["settee"] && b.res.Pull.Settee != nil {
			b.res.Incremental.Settee = b.settee(ctx, "pull", changed, "")
			if m := b.res.Incremental.Settee; m != nil {
				b.checkCount("settee incremental: revisions fetched = documents changed", m.DocsRead, int64(changed))
				if err := verifyLocal(ctx, b.setteeDB, b.src, b.ds, &b.res.Dataset); err != nil {
					b.fail("settee incremental: verify the local store", err)
				} else {
					b.check("settee incremental: the local store matches the edited source")
				}
			}
		}
		if cfg.Contenders["pouchdb"] && b.res.Pull.PouchDB != nil {
			b.res.Incremental.PouchDB = b.pouch(ctx, "pull", b.src, changed)
			if m := b.res.Incremental.PouchDB; m != nil {
				b.checkCount("pouchdb incremental: revisions fetched = documents changed", m.DocsRead, int64(changed))
			}
		}
	}
	return ctx.Err()
}

func (b *bench) checkCount(what string, got, want int64) {
	if got != want {
		b.fail(what, fmt.Errorf("got %d, want %d", got, want))
		return
	}
	b.check(fmt.Sprintf("%s (%d)", what, got))
}

// checkRemote compares a database's doc counts with the dataset's.
func (b *bench) checkRemote(ctx context.Context, dbURL, what string) error {
	info, err := dbInfo(ctx, dbURL)
	if err != nil {
		b.fail(what, err)
		return err
	}
	d := b.res.Dataset
	if info.DocCount != int64(d.Live) {
		err := fmt.Errorf("doc_count %d, want %d", info.DocCount, d.Live)
		b.fail(what, err)
		return err
	}
	if info.DocDelCount != nil && *info.DocDelCount != int64(d.Deleted) {
		err := fmt.Errorf("doc_del_count %d, want %d", *info.DocDelCount, d.Deleted)
		b.fail(what, err)
		return err
	}
	b.check(fmt.Sprintf("%s: doc_count %d", what, info.DocCount))
	return nil
}

// settee runs our replicator in a child process. Without --remote, the
// remote is the source database.
func (b *bench) settee(ctx context.Context, mode string, docs int, profile string, extra ...string) *Measure {
	args := []string{mode, "--local", b.setteeDB}
	if len(extra) == 0 {
		args = append(args, "--remote", b.src)
	}
	args = append(args, extra...)
	if b.cfg.CPUProfileDir != "" && profile != "" {
		if err := os.MkdirAll(b.cfg.CPUProfileDir, 0o755); err != nil {
			b.fail("settee "+mode, err)
			return nil
		}
		profile = filepath.Join(b.cfg.CPUProfileDir, profile)
		args = append(args, "--cpuprofile", profile)
	} else {
		profile = ""
	}
	b.logf("settee %s (%d docs)", mode, docs)
	cmd, err := setteeCmd(ctx, args...)
	if err != nil {
		b.fail("settee "+mode, err)
		return nil
	}
	serverProfile := ""
	if profile != "" && b.srv != nil && b.srv.profileControl != "" {
		serverProfile = filepath.Join(filepath.Dir(profile), "server-"+filepath.Base(profile))
		if err := b.profileServer(serverProfile); err != nil {
			b.fail("settee "+mode, err)
			return nil
		}
	}
	cpu0 := b.serverCPU()
	m, err := runMeasured(ctx, cmd, docs, b.verbose())
	if serverProfile != "" {
		if perr := b.profileServer(""); perr != nil && err == nil {
			err = perr
		}
	}
	if err != nil {
		b.fail("settee "+mode, err)
		return nil
	}
	m.CPUProfile = profile
	m.ServerCPUProfile = serverProfile
	m.ServerCPUSeconds = b.serverCPU() - cpu0
	b.setRate(m)
	b.logf("settee %s: %.2fs, %.0f docs/s, peak RSS %.1f MB, %d requests, CPU %.2fs, server CPU %.2fs", mode, m.Seconds, m.DocsPerSec, mb(m.PeakRSS), m.Requests, m.CPUSeconds, m.ServerCPUSeconds)
	return m
}

// pouch runs PouchDB's replicator with node.
func (b *bench) pouch(ctx context.Context, mode, remote string, docs int) *Measure {
	args := []string{mode, "--remote", remote, "--local", b.pouchDir, "--adapter", b.cfg.PouchAdapter}
	if b.cfg.PouchAdapter == "memory" {
		if mode == "push" {
			args = append(args, "--prefill", b.src)
		} else if docs != b.ds.Count() {
			// An in-memory store is empty in a new process: re-syncs need
			// the persistent adapter.
			b.logf("pouchdb %s: skipped with the memory adapter", mode)
			return nil
		}
	}
	if b.cfg.PouchBatchSize > 0 {
		args = append(args, "--batch-size", fmt.Sprint(b.cfg.PouchBatchSize))
	}
	b.logf("pouchdb %s (%d docs)", mode, docs)
	cpu0 := b.serverCPU()
	m, err := runMeasured(ctx, pouchCmd(ctx, b.cfg.Root, args...), docs, b.verbose())
	if err != nil {
		b.fail("pouchdb "+mode, err)
		return nil
	}
	m.ServerCPUSeconds = b.serverCPU() - cpu0
	b.setRate(m)
	b.logf("pouchdb %s: %.2fs, %.0f docs/s, peak RSS %.1f MB, %d requests, CPU %.2fs, server CPU %.2fs", mode, m.Seconds, m.DocsPerSec, mb(m.PeakRSS), m.Requests, m.CPUSeconds, m.ServerCPUSeconds)
	return m
}

// setRate fills MBPerSec for a whole-dataset replication.
func (b *bench) setRate(m *Measure) {
	if m.Docs == b.ds.Count() && m.Seconds > 0 {
		m.MBPerSec = mb(b.res.Dataset.payload()) / m.Seconds
	}
}

func (s DatasetStats) payload() int64 { return s.BodyBytes + s.AttachmentBytes }

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func meta(cfg *config) Meta {
	m := Meta{
		Date:          time.Now().UTC().Format(time.RFC3339),
		CPUs:          runtime.NumCPU(),
		GoVersion:     runtime.Version(),
		Seed:          cfg.Seed,
		Docs:          cfg.Docs,
		BigAttachment: cfg.BigAttachment,
		PouchAdapter:  cfg.PouchAdapter,
	}
	if cfg.BigAttachment > 0 {
		m.Docs = 1
	}
	m.LoadAvgStart = loadAvg()
	if out, err := exec.Command("uname", "-a").Output(); err == nil {
		m.Uname = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		m.NodeVersion = strings.TrimSpace(string(out))
	}
	m.Commit = buildinfo.Revision(7, "-dirty")
	if out, err := exec.Command("git", "-C", cfg.Root, "describe", "--always", "--dirty").Output(); err == nil && m.Commit == "" {
		m.Commit = strings.TrimSpace(string(out))
	}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "model name") {
				if i := strings.Index(line, ":"); i >= 0 {
					m.CPU = strings.TrimSpace(line[i+1:])
				}
				break
			}
		}
	}
	return m
}

// benchKey is the key of the encrypted contender's store (a benchmark's,
// not a secret).
const benchKey = "5e77ee5e77ee5e77ee5e77ee5e77ee5e77ee5e77ee5e77ee5e77ee5e77ee5e77"

// removeStore removes a store file and the files SQLite keeps beside it.
func removeStore(path string) {
	for _, s := range []string{"", "-wal", "-shm", "-journal"} {
		_ = os.Remove(path + s)
	}
}
