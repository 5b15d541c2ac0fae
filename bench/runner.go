package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// childEnv marks a re-executed bench binary (or test binary) as a child
// that runs one replication.
const childEnv = "SETTEE_BENCH_CHILD"

// childStats is what a contender's process prints as its last stdout line.
type childStats struct {
	Seconds       float64 `json:"seconds"`
	DocsRead      int64   `json:"docs_read"`
	DocsWritten   int64   `json:"docs_written"`
	Requests      int64   `json:"requests"`
	BytesSent     int64   `json:"bytes_sent"`
	BytesReceived int64   `json:"bytes_received"`
	Failures      int64   `json:"doc_write_failures"`
	// VmHWM is the process's own peak RSS from /proc/self/status, read just
	// before it exits.
	VmHWM int64 `json:"vm_hwm_bytes"`
	// Body bytes (after gzip decoding), from the couch client's own stats.
	BodyBytesSent int64 `json:"body_bytes_sent,omitempty"`
	BodyBytesRecv int64 `json:"body_bytes_received,omitempty"`
}

// runMeasured runs a contender's process, parses its stats line and takes
// its peak RSS from wait4's rusage.
func runMeasured(ctx context.Context, cmd *exec.Cmd, docs int, verbose io.Writer) (*Measure, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if verbose != nil {
		cmd.Stderr = io.MultiWriter(&stderr, verbose)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n%s", filepath.Base(cmd.Path), err, tail(stderr.Bytes(), 4000))
	}
	lines := bytes.Split(bytes.TrimSpace(stdout.Bytes()), []byte("\n"))
	var st childStats
	if err := json.Unmarshal(lines[len(lines)-1], &st); err != nil {
		return nil, fmt.Errorf("%s: bad stats line %q: %w\n%s", filepath.Base(cmd.Path), lines[len(lines)-1], err, tail(stderr.Bytes(), 4000))
	}
	if st.Failures > 0 {
		return nil, fmt.Errorf("%s: %d documents failed to replicate", filepath.Base(cmd.Path), st.Failures)
	}
	m := &Measure{
		Seconds:        st.Seconds,
		ProcessSeconds: elapsed.Seconds(),
		Docs:           docs,
		Requests:       st.Requests,
		BytesSent:      st.BytesSent,
		BytesReceived:  st.BytesReceived,
		DocsRead:       st.DocsRead,
		DocsWritten:    st.DocsWritten,
		BodyBytesSent:  st.BodyBytesSent,
		BodyBytesRecv:  st.BodyBytesRecv,
	}
	if st.Seconds > 0 {
		m.DocsPerSec = float64(docs) / st.Seconds
	}
	// The process reports its own VmHWM. wait4's ru_maxrss is no good
	// here: Linux carries the pre-exec memory into it, and os/exec's vfork
	// shares the harness's memory, so a small child reports the harness's
	// RSS.
	m.PeakRSS = st.VmHWM
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && m.PeakRSS == 0 {
		m.PeakRSS = int64(ru.Maxrss) << 10 // kilobytes on Linux
	}
	m.CPUSeconds = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	return m, ctx.Err()
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// setteeCmd builds the command that runs our replicator in a child: this
// executable again, marked by childEnv.
func setteeCmd(ctx context.Context, args ...string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	return cmd, nil
}

// pouchCmd builds the command that runs PouchDB's replicator with node.
func pouchCmd(ctx context.Context, root string, args ...string) *exec.Cmd {
	return nodeCmd(ctx, root, "pouchdb.js", args...)
}

// nodeCmd builds the command that runs one of bench's scripts with node,
// in the repository (where node_modules is).
func nodeCmd(ctx context.Context, root, script string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(root, "bench", script)}, args...)...)
	cmd.Dir = root
	return cmd
}
