package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/settee/settee/internal/memlimit"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/server"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
	"github.com/settee/settee/sync/localpeer"
)

// runChild runs one replication of our replicator between the local store
// and a remote database, and prints its childStats as one JSON line:
//
//	pull|push --remote URL --local PATH [--cpuprofile FILE] [--no-store]
func runChild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "serve" {
		return runServe(ctx, args[1:], stderr)
	}
	if len(args) > 0 && args[0] == "ui" {
		return runUIChild(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "live" || args[0] == "hub") {
		return runLiveChild(ctx, args[0], args[1:], stdout, stderr)
	}
	if len(args) == 0 || (args[0] != "pull" && args[0] != "push") {
		return errors.New("child: want pull, push, live, hub or serve")
	}
	mode := args[0]
	fs := flag.NewFlagSet("child "+mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	remote := fs.String("remote", "", "remote database URL")
	local := fs.String("local", "", "local store path")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the replication here")
	noStore := fs.Bool("no-store", false, "pull into a target that stores nothing (discardPeer)")
	keyHex := fs.String("key", "", "the local store is encrypted with this key (64 hex digits; localdb.Options.Key)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *remote == "" || *local == "" {
		return errors.New("child: --remote and --local are required")
	}
	// As settee pull and push do (GOMEMLIMIT=off in the environment
	// measures without it).
	memlimit.Apply()
	if *noStore && mode != "pull" {
		return errors.New("child: --no-store is for pulls")
	}
	cnt := &counter{}
	rp, err := couch.New(*remote, &couch.Options{Transport: cnt.transport()})
	if err != nil {
		return err
	}
	opts := sync.Options{Source: rp}
	var db *localdb.DB
	if *noStore {
		opts.Target = newDiscardPeer()
	} else {
		key, err := hex.DecodeString(*keyHex)
		if err != nil {
			return fmt.Errorf("child: --key: %w", err)
		}
		if len(key) == 0 {
			key = nil
		}
		if db, err = localdb.Open(*local, &localdb.Options{Key: key}); err != nil {
			return err
		}
		defer db.Close()
		opts.Target = localpeer.New(db)
	}
	if mode == "push" {
		opts.Source, opts.Target = opts.Target, opts.Source
	}
	stop, err := startCPUProfile(*cpuprofile)
	if err != nil {
		return err
	}
	defer stop()
	start := time.Now()
	res, err := sync.Replicate(ctx, opts)
	secs := time.Since(start).Seconds()
	if err != nil {
		return fmt.Errorf("replicate: %w", err)
	}
	st := childStats{
		Seconds:       secs,
		DocsRead:      res.Stats.DocsRead,
		DocsWritten:   res.Stats.DocsWritten,
		Failures:      res.Stats.DocWriteFailures,
		Requests:      cnt.requests.Load(),
		BytesSent:     cnt.sent.Load(),
		BytesReceived: cnt.recv.Load(),
		BodyBytesSent: rp.Stats().BytesSent,
		BodyBytesRecv: rp.Stats().BytesReceived,
	}
	pprof.StopCPUProfile()
	if db != nil {
		if err := db.Close(); err != nil {
			return err
		}
	}
	st.VmHWM = procStatusBytes(os.Getpid(), "VmHWM:")
	return writeStatsLine(stdout, st)
}

// runServe runs our own server over the SQLite files of a directory:
//
//	serve --dir DIR --addr 127.0.0.1:PORT
func runServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("child serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "data directory")
	addr := fs.String("addr", "", "listening address")
	control := fs.String("profile-control", "", "profile on the harness's request through this control file (serve_profile.go)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *control != "" {
		watchProfileControl(*control)
	}
	return server.Run(ctx, server.Config{Addr: *addr, DataDir: *dir, MaxBodySize: 4 << 30})
}

// counter counts HTTP requests and the bytes on the wire (headers
// included, after compression), like the PouchDB script does.
type counter struct {
	requests, sent, recv atomic.Int64
}

// transport is couch's default transport with counting connections.
func (c *counter) transport() http.RoundTripper {
	tr, err := couch.NewTransport(nil)
	if err != nil {
		panic(err) // only reading Options.CAFile can fail, and none is given
	}
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countConn{Conn: conn, c: c}, nil
	}
	return &countRT{next: tr, c: c}
}

type countRT struct {
	next http.RoundTripper
	c    *counter
}

func (rt *countRT) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.c.requests.Add(1)
	return rt.next.RoundTrip(req)
}

type countConn struct {
	net.Conn
	c *counter
}

func (cc *countConn) Read(p []byte) (int, error) {
	n, err := cc.Conn.Read(p)
	cc.c.recv.Add(int64(n))
	return n, err
}

func (cc *countConn) Write(p []byte) (int, error) {
	n, err := cc.Conn.Write(p)
	cc.c.sent.Add(int64(n))
	return n, err
}

// startCPUProfile writes a CPU profile to path (nothing when path is
// empty) until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeStatsLine prints a child's stats as its last stdout line, the line
// runLine reads back.
func writeStatsLine(w io.Writer, st any) error {
	line, err := json.Marshal(st)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", line)
	return err
}
