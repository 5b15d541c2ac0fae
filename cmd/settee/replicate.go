package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/failure"
	"github.com/settee/settee/internal/memlimit"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/localpeer"
)

// replFlags are the flags of pull, push and sync.
type replFlags struct {
	remote       remoteFlags
	continuous   bool
	filter       string
	queryParams  listFlag
	docIDs       string
	docIDsSet    bool // --doc-ids was given, even empty
	selector     string
	createTarget bool
	since        string
	retries      int
	jsonOut      bool
	attachments  string
	throttle     int
}

func (f *replFlags) registerOn(fs *flag.FlagSet, dir string) {
	f.attachments = "eager"
	fs.BoolVar(&f.continuous, "continuous", false, "keep replicating new changes until Ctrl-C")
	switch dir {
	case "push":
		fs.StringVar(&f.filter, "filter", "", "a design document filter `ddoc/name` of the local store, run on what the push sends")
	default:
		fs.StringVar(&f.filter, "filter", "", "a design document filter `ddoc/name` of the remote (sync: for its pull)")
	}
	fs.Var(&f.queryParams, "query-param", "a `k=v` parameter for --filter (repeatable)")
	fs.Func("doc-ids", "replicate only these comma-separated `ids`", func(v string) error {
		f.docIDs, f.docIDsSet = v, true
		return nil
	})
	fs.StringVar(&f.selector, "selector", "", "replicate only the documents matching this Mango selector (`JSON`)")
	switch dir {
	case "pull": // a pull creates the local store when missing
	case "push":
		fs.BoolVar(&f.createTarget, "create-target", false, "create the remote database if it does not exist")
	default:
		fs.BoolVar(&f.createTarget, "create-target", false, "create the remote database if it does not exist (the local store is created when missing)")
	}
	since := "start after this source `seq` instead of the checkpoint"
	if dir == "sync" {
		since = "start the pull after this remote `seq` instead of the checkpoint"
	}
	fs.StringVar(&f.since, "since", "", since)
	fs.IntVar(&f.retries, "retries", 3, "retry a failed step (a request, or a body cut short) this many `times` with backoff (0: fail at once)")
	fs.BoolVar(&f.jsonOut, "json", false, "print one JSON event per line instead of a status line")
	if dir != "push" {
		fs.StringVar(&f.attachments, "attachments", "eager", "the attachment bodies a pull brings (`MODE`): eager, all of them; lazy, none (fetch them later with fetch-attachment); or lazy-over=BYTES, only those of at most BYTES")
	}
	fs.IntVar(&f.throttle, "throttle", 0, "write at most `N` documents a second, each way (0: no bound): a low-power mode for a sync left running in the background")
	f.remote.register(fs)
}

// options converts the flags to replication options (without the peers).
func (f *replFlags) options() (sync.Options, error) {
	o := sync.Options{Continuous: f.continuous, CreateTarget: f.createTarget, Filter: f.filter, Throttle: f.throttle}
	if f.throttle < 0 {
		return o, usageErrorf("--throttle must be 0 (no bound) or more, not %d", f.throttle)
	}
	switch {
	case f.retries < 0:
		return o, usageErrorf("--retries must be 0 (fail at once) or more, not %d", f.retries)
	case f.retries == 0:
		o.Retries = -1
	default:
		o.Retries = f.retries
	}
	if f.docIDsSet {
		for _, id := range strings.Split(f.docIDs, ",") {
			if id = strings.TrimSpace(id); id != "" {
				o.DocIDs = append(o.DocIDs, id)
			}
		}
		if len(o.DocIDs) == 0 { // would replicate everything
			return o, usageErrorf("--doc-ids %q lists no id (give comma-separated ids, such as a,b)", f.docIDs)
		}
	}
	if f.selector != "" {
		if !json.Valid([]byte(f.selector)) || !strings.HasPrefix(strings.TrimSpace(f.selector), "{") {
			return o, usageErrorf("--selector must be a JSON object, such as '{\"type\":\"note\"}'")
		}
		o.Selector = json.RawMessage(f.selector)
	}
	if len(f.queryParams) > 0 {
		if f.filter == "" {
			return o, usageErrorf("--query-param needs --filter")
		}
		o.QueryParams = map[string]string{}
		for _, kv := range f.queryParams {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return o, usageErrorf("--query-param %q: expected k=v", kv)
			}
			o.QueryParams[k] = v
		}
	}
	if n := btoi(o.Filter != "") + btoi(o.Selector != nil) + btoi(o.DocIDs != nil); n > 1 {
		return o, usageErrorf("--filter, --selector and --doc-ids exclude each other")
	}
	att, err := sync.ParseAttachments(f.attachments)
	if err != nil {
		return o, usageErrorf("--attachments: %v", err)
	}
	o.Attachments = att
	if f.since != "" {
		if json.Valid([]byte(f.since)) {
			o.Since = json.RawMessage(f.since)
		} else {
			o.Since, _ = json.Marshal(f.since) // opaque CouchDB 3 seqs, "now"
		}
	}
	return o, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

var pullHelp = cmdHelp{
	usage: "settee pull [flags] LOCAL.db URL",
	about: `Replicate a CouchDB database (URL) into a local store (created if missing),
one-shot or with --continuous. A checkpoint is written as it goes, so an
interrupted pull (Ctrl-C) resumes where it stopped.

Credentials come from the URL (http://user:pass@host/db), from --user and
--password-file, or from $SETTEE_USER and $SETTEE_PASSWORD; they are never
printed. On a terminal a status line shows the progress; with --json one
event per line is printed instead.

--json lines are objects with a "kind": "state" and "progress" (with
"replication" push or pull, "state", the counters "docs_read",
"docs_written", "doc_write_failures", "missing_checked", "missing_found",
"pending", "last_seq", "checkpointed_seq"), "doc_failure" (a document the
target refused: "doc_id", "doc_rev", "error"), then per direction "done",
"interrupted" or "error" (with "start_seq" and "last_seq"), and last
"end" with "exit_code", "error", "requests", "bytes_sent",
"bytes_received" and "seconds".` + replAbout,
	examples: `  settee pull notes.db http://127.0.0.1:5984/notes
  SETTEE_USER=alice SETTEE_PASSWORD=secret settee pull notes.db https://couch.example.com/notes
  settee pull notes.db http://127.0.0.1:5984/notes --user alice --password-file ~/.couchpw
  settee pull notes.db http://127.0.0.1:5984/notes --selector '{"type":"note"}' --json
  settee pull notes.db http://127.0.0.1:5984/notes --continuous`,
	exits: replExits,
}

var pushHelp = cmdHelp{
	usage: "settee push [flags] LOCAL.db URL",
	about: `Replicate a local store to a CouchDB database (URL), one-shot or with
--continuous. --create-target creates the database when missing.
Credentials and output work as for "settee pull".` + replAbout,
	examples: `  settee push notes.db http://alice@127.0.0.1:5984/notes --create-target
  settee push notes.db https://couch.example.com/notes --doc-ids shopping-list,todo`,
	exits: replExits,
}

var syncHelp = cmdHelp{
	usage: "settee sync [flags] LOCAL.db URL",
	about: `Replicate both ways between a local store and a CouchDB database: a push
and a pull running together, one-shot or with --continuous. Edits made on
both sides to the same document become a conflict, on both sides, with the
same winner; list them with "settee conflicts" and resolve them with
"settee resolve", then sync again. The filters apply to both directions.
Credentials and output work as for "settee pull".` + replAbout,
	examples: `  settee sync notes.db http://127.0.0.1:5984/notes --create-target
  settee sync notes.db https://alice@couch.example.com/notes --password-file pw.txt --continuous`,
	exits: replExits,
}

const replAbout = `

Ctrl-C (or SIGTERM) stops cleanly: the checkpoint is written first. A
one-shot replication then exits with code 130 (run it again to resume); a
continuous one, which only ends this way, exits 0. Failures print one line
on stderr and exit non-zero (see the exit codes below).`

func runPull(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runReplicate(ctx, "pull", pullHelp, args, stdout, stderr)
}

func runPush(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runReplicate(ctx, "push", pushHelp, args, stdout, stderr)
}

func runSync(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runReplicate(ctx, "sync", syncHelp, args, stdout, stderr)
}

func runReplicate(ctx context.Context, dir string, h cmdHelp, args []string, stdout, stderr io.Writer) (err error) {
	var f replFlags
	fs := flagSet(dir)
	ks := keyFlag(fs)
	f.registerOn(fs, dir)
	va := &validateAs{}
	if dir != "push" {
		va = validateAsFlag(fs)
	}
	pos, err := parseFlags(fs, h, args, 2, 2, stdout)
	if err != nil {
		return err
	}
	if err := va.check(); err != nil {
		return err
	}
	opts, err := f.options()
	if err != nil {
		return err
	}
	if dir == "push" && opts.Attachments.IsLazy() {
		return usageErrorf("--attachments lazy applies to pull and the pull of sync: a push sends every body it has")
	}
	if f.remote.timeout <= 0 {
		return usageErrorf("--timeout must be positive")
	}
	rem, err := newRemote(pos[1], &f.remote, stderr)
	if err != nil {
		return err
	}
	memlimit.Apply() // a soft memory limit, unless GOMEMLIMIT says otherwise
	rem.retries = -1 // the replicator retries each step: --retries 3 is at most 4 attempts
	remotePeer, err := newRemotePeer(rem)
	if err != nil {
		return err
	}
	var db *localdb.DB
	if dir == "push" {
		// Refuse a path with no store before any request; a push never
		// creates one.
		if db, err = openStore(pos[0], false, ks); err != nil {
			return err
		}
		defer closeStore(db, &err)
	}
	// Check the remote first, so a wrong URL or password fails at once
	// and before a local store is created for nothing. A failure that may
	// pass (a restarting server, a network glitch) is left to the
	// replication, which retries its own check; a continuous replication
	// started offline waits for the remote (it reports the "offline" state
	// and retries with backoff).
	offline := preflight(ctx, remotePeer, dir, f.createTarget)
	if offline != nil && rem.URL.Scheme == "http" && errors.Is(offline, couchdoc.ErrBadRequest) && speaksTLS(ctx, rem.URL) {
		https := *rem.URL
		https.Scheme = "https"
		return &exitError{code: exitUsage, msg: fmt.Sprintf("%s: the server speaks HTTPS, not HTTP: use %s", rem, &https), err: offline}
	}
	failNow := !failure.Transient(offline) && !(f.continuous && exitCode(offline) == exitTransient) ||
		!f.continuous && f.retries == 0 // --retries 0: no second try
	if offline != nil && failNow {
		err = explain(dir, rem, remotePeer.String(), offline, nil, f.createTarget)
		if f.jsonOut {
			newProgress(stdout, dir, f.continuous, true).end(rem.String(), remotePeer.Stats(), err)
		}
		return err
	}
	if db == nil { // pull and sync create the store, once the remote answered
		if db, err = openStore(pos[0], true, ks); err != nil {
			return err
		}
		defer closeStore(db, &err)
		// A refused revision is a doc_write_failure; the pull goes on.
		defer va.on(db)()
	}
	local := newLocalPeer(db)
	if opts.Attachments.IsLazy() {
		if err := recordLazySource(ctx, db, rem); err != nil {
			return err
		}
	}

	prog := newProgress(stdout, dir, f.continuous, f.jsonOut)
	prog.tries = f.retries
	opts.OnEvent = prog.OnEvent
	// A body a lazy pull left behind is fetched from the remote before a
	// push sends its document, when the remote does not show it has it
	// (pouchdb-server answers revs_diff without possible_ancestors).
	opts.FetchMissing = localpeer.FetchFrom(remotePeer, db)
	if offline != nil {
		// Say so at this first failure, not after the replicator's own
		// retries of its first step.
		for _, d := range directions(dir) {
			prog.OnEvent(sync.Event{Kind: sync.EventState, Status: sync.Status{Replication: d, State: sync.StateOffline}, Err: offline})
		}
	}
	// One supervisor runs both modes, as the mobile layer does: it stops
	// with its checkpoint when ctx is cancelled (Ctrl-C), and a continuous
	// session rides out the remote going away.
	sup, err := sync.NewSupervisor(sync.SupervisorConfig{Local: local, Remote: remotePeer,
		Direction: supervisorDirection(dir), Options: opts})
	if err != nil {
		return explain(dir, rem, remotePeer.String(), err, nil, f.createTarget)
	}
	if err = sup.Start(ctx); err == nil {
		err = sup.Wait()
	}
	if err == nil && ctx.Err() != nil && !f.continuous {
		err = ctx.Err() // interrupted: Ctrl-C is how a continuous one ends
	}
	results := dirResults(dir, sup.Results())
	if err == nil && !f.continuous {
		err = refused(results)
	}
	err = explain(dir, rem, remotePeer.String(), err, results, f.createTarget)
	for _, r := range results {
		if r.res != nil {
			prog.finish(r.dir, r.res, err)
		}
	}
	wire := remotePeer.Stats() // the client sends each request once: retries are the replicator's
	for _, r := range results {
		if r.res != nil {
			wire.Retries += r.res.Retries
		}
	}
	prog.end(rem.String(), wire, err)
	return err
}

// speaksTLS reports whether host answers a TLS handshake: told after a
// plain HTTP request got a 400, it means the URL should be https (Go's and
// most servers' answer to plain HTTP on a TLS port is a 400). Only the
// handshake is made, so the certificate need not be trusted.
func speaksTLS(ctx context.Context, u *url.URL) bool {
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "80")
	}
	d := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} // a probe: nothing is sent
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// directions names the replications of a command, as its events do.
func directions(dir string) []string {
	if dir == "sync" {
		return []string{"push", "pull"}
	}
	return []string{""}
}

// preflight asks the remote for its database info. A missing database is
// fine when the replication will create it.
func preflight(ctx context.Context, remote sync.Peer, dir string, createTarget bool) error {
	_, err := remote.Info(ctx)
	if err != nil && createTarget && dir != "pull" && errors.Is(err, couchdoc.ErrNotFound) {
		return nil
	}
	if err != nil {
		return &sync.PeerError{Role: "remote", Peer: remote.String(), Op: "check", Err: err}
	}
	return nil
}

// supervisorDirection is the sync.Direction of a command.
func supervisorDirection(dir string) sync.Direction {
	if dir == "sync" {
		return sync.Both
	}
	return sync.Direction(dir)
}

// dirResults names the supervisor's results (push then pull for sync).
func dirResults(dir string, res []*sync.Result) []dirResult {
	names := []string{dir}
	if dir == "sync" {
		names = []string{"push", "pull"}
	}
	var out []dirResult
	for i, r := range res {
		if i < len(names) {
			out = append(out, dirResult{names[i], r})
		}
	}
	return out
}

// dirResult is the result of one direction.
type dirResult struct {
	dir string
	res *sync.Result
}

// refused reports documents the target refused (a validation function,
// permissions): the replication ran to its end, but not everything arrived.
func refused(results []dirResult) error {
	var n int64
	var first *sync.DocFailure
	for _, r := range results {
		if r.res == nil {
			continue
		}
		n += r.res.Stats.DocWriteFailures
		if first == nil && len(r.res.DocFailures) > 0 {
			first = &r.res.DocFailures[0]
		}
	}
	if n == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s not replicated", plural(n, "document"))
	if first != nil {
		msg += fmt.Sprintf(" (first: %s %s: %v)", first.ID, first.Rev, first.Err)
	}
	return &exitError{code: exitFailure, msg: msg}
}

// explain turns a replication error into a one-line message with the
// right exit code. The remote is named by its URL without credentials
// (remoteName); errors of the local store are not blamed on it.
func explain(dir string, rem *remote, remoteName string, err error, results []dirResult, createTarget bool) error {
	if err == nil {
		return nil
	}
	code := exitCode(err)
	var pe *sync.PeerError
	if errors.As(err, &pe) && pe.Peer != remoteName && code != exitInterrupted {
		return &exitError{code: code, msg: fmt.Sprintf("%s: %v", dir, err), err: err}
	}
	switch code {
	case exitInterrupted:
		msg := "interrupted"
		var seqs []string
		for _, r := range results {
			if r.res != nil && len(r.res.LastSeq) > 0 {
				seqs = append(seqs, strings.TrimSpace(r.dir+" seq "+string(r.res.LastSeq)))
			}
		}
		if len(seqs) > 0 {
			msg += "; checkpoint at " + strings.Join(seqs, ", ") + "; run the same command again to resume"
		}
		return &exitError{code: code, msg: msg, err: err}
	case exitTransient:
		reason := unreachableReason(err)
		if reason == "" {
			// An answer that may differ next time (5xx, nodedown, garbled).
			return &exitError{code: code, msg: fmt.Sprintf("%s: %s failing for now: %v (run the same command again to resume)", dir, rem, err), err: err}
		}
		return &exitError{code: code, msg: fmt.Sprintf("%s: cannot reach %s: %s", dir, rem, reason), err: err}
	case exitAuth:
		who := "no credentials given"
		if rem.User != "" {
			who = fmt.Sprintf("user %q", rem.User)
		}
		what := "unauthorized"
		if errors.Is(err, couchdoc.ErrForbidden) {
			what = "forbidden"
		}
		return &exitError{code: code, msg: fmt.Sprintf("%s: %s %s at %s (%s)", dir, what, reasonOf(err), rem, who), err: err}
	case exitNotFound:
		return &exitError{code: code, msg: fmt.Sprintf("%s: database %s not found%s", dir, rem, notFoundHint(dir, rem, createTarget)), err: err}
	case exitUsage:
		if failure.BadCertificate(err) {
			return &exitError{code: code, msg: fmt.Sprintf("%s: cannot reach %s: %s", dir, rem, unreachableReason(err)), err: err}
		}
	}
	detail := err.Error()
	if pe != nil && pe.Peer == remoteName {
		detail = pe.Detail() // the remote is named once, here
	}
	return &exitError{code: code, msg: fmt.Sprintf("%s %s: %s", dir, rem, detail), err: err}
}

// notFoundHint is what to do about a remote database that is not found: a
// path of several segments is likely a name with a / in it, which CouchDB
// reads as database and document unless written %2F; else
// --create-target, which pull does not have.
func notFoundHint(dir string, rem *remote, createTarget bool) string {
	if name := strings.Trim(rem.URL.Path, "/"); strings.Contains(name, "/") {
		u := *rem.URL
		u.Path = "/" + name
		u.RawPath = "/" + strings.ReplaceAll(name, "/", "%2F")
		return fmt.Sprintf(" (a / in a database name is written %%2F: %s)", &u)
	}
	if dir == "pull" || createTarget {
		return ""
	}
	return " (add --create-target to create it)"
}

// reasonOf returns the CouchDB reason of err, quoted, or "".
func reasonOf(err error) string {
	var ce *couchdoc.Error
	if errors.As(err, &ce) && ce.Reason != "" {
		return fmt.Sprintf("(%s)", strings.TrimSuffix(ce.Reason, "."))
	}
	return ""
}
