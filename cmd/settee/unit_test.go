package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/sync"
)

func TestParseFlagsInterleaved(t *testing.T) {
	var f replFlags
	fs := flagSet("pull")
	f.registerOn(fs, "pull")
	pos, err := parseFlags(fs, pullHelp, []string{"a.db", "--continuous", "http://h/db", "--query-param", "k=v", "--filter", "d/f", "--query-param", "x=y=z"}, 2, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(pos) != "[a.db http://h/db]" || !f.continuous {
		t.Fatalf("pos %v, continuous %v", pos, f.continuous)
	}
	o, err := f.options()
	if err != nil {
		t.Fatal(err)
	}
	if o.Filter != "d/f" || o.QueryParams["k"] != "v" || o.QueryParams["x"] != "y=z" {
		t.Errorf("options = %+v", o)
	}
	// "--" ends the flags: what follows is positional even if it looks like a flag.
	fs = flagSet("get")
	fs.Bool("revs", false, "")
	pos, err = parseFlags(fs, getHelp, []string{"a.db", "--", "--revs"}, 2, 2, nil)
	if err != nil || fmt.Sprint(pos) != "[a.db --revs]" {
		t.Errorf("pos %v, err %v", pos, err)
	}
}

func TestReplOptions(t *testing.T) {
	for _, tc := range []struct {
		f    replFlags
		bad  bool
		want string
	}{
		{f: replFlags{docIDs: "a, b,,c", docIDsSet: true}, want: "[a b c]"},
		{f: replFlags{docIDs: "", docIDsSet: true}, bad: true},
		{f: replFlags{docIDs: " , ", docIDsSet: true}, bad: true},
		{f: replFlags{retries: -1}, bad: true},
		{f: replFlags{throttle: -1}, bad: true},
		{f: replFlags{throttle: 500}, want: "throttle 500"},
		{f: replFlags{selector: `["x"]`}, bad: true},
		{f: replFlags{selector: `{"type":"x"}`, docIDs: "a", docIDsSet: true}, bad: true},
		{f: replFlags{queryParams: listFlag{"k=v"}}, bad: true},
		{f: replFlags{filter: "d/f", queryParams: listFlag{"novalue"}}, bad: true},
		{f: replFlags{since: "42"}, want: "42"},
		{f: replFlags{since: "now"}, want: `"now"`},
		{f: replFlags{since: "12-g1AAAA"}, want: `"12-g1AAAA"`},
	} {
		o, err := tc.f.options()
		if (err != nil) != tc.bad {
			t.Errorf("%+v: err %v", tc.f, err)
			continue
		}
		if tc.bad {
			if exitCode(err) != exitUsage {
				t.Errorf("%+v: exit code %d", tc.f, exitCode(err))
			}
			continue
		}
		got := fmt.Sprint(o.DocIDs)
		if o.Since != nil {
			got = string(o.Since)
		}
		if o.Throttle != 0 {
			got = fmt.Sprint("throttle ", o.Throttle)
		}
		if got != tc.want {
			t.Errorf("%+v: got %s, want %s", tc.f, got, tc.want)
		}
	}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
	}{
		{fmt.Errorf("x: %w", couchdoc.ErrNotFound), exitNotFound},
		{fmt.Errorf("x: %w", couchdoc.ErrUnauthorized), exitAuth},
		{couchdoc.ErrForbidden, exitAuth},
		{couchdoc.ErrConflict, exitConflict},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), exitTransient},
		{&url.Error{Op: "Get", URL: "http://h", Err: context.DeadlineExceeded}, exitTransient},
		{fmt.Errorf("pull: %w", couchdoc.FromBody(412, "nodedown", "progress not possible")), exitTransient},
		{couchdoc.FromBody(503, "service unavailable", "x"), exitTransient},
		{couchdoc.FromBody(500, "timeout", "x"), exitTransient},
		{couchdoc.FromBody(412, "file_exists", "x"), exitFailure},
		{fmt.Errorf("stop: %w", context.Canceled), exitInterrupted},
		{errors.New("boom"), exitFailure},
		{usageErrorf("bad"), exitUsage},
		{couchdoc.Errorf(couchdoc.ErrBadRequest, "invalid JSON"), exitUsage},
		{&fs.PathError{Op: "read", Path: "adir", Err: syscall.EISDIR}, exitFailure},
		{&fs.PathError{Op: "mkdir", Path: "plain.txt", Err: syscall.ENOTDIR}, exitFailure},
		{&wire.MalformedError{What: "answer", Foreign: true, Err: errors.New("an array")}, exitFailure},
		{&wire.MalformedError{What: "answer", Err: io.ErrUnexpectedEOF}, exitTransient},
	} {
		if got := exitCode(tc.err); got != tc.code {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
	}
}

func TestDBNameOf(t *testing.T) {
	for in, want := range map[string]string{
		"/x/notes.db":   "notes",
		"Phone Data.db": "phone_data",
		"2024.sqlite":   "db2024",
		"a.b.db":        "a_b",
	} {
		if got := dbNameOf(in); got != want {
			t.Errorf("dbNameOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStateLines(t *testing.T) {
	p := newProgress(io.Discard, "sync", true, false)
	refused := &url.Error{Op: "Get", URL: "http://h/db", Err: syscall.ECONNREFUSED}
	var got []string
	for _, ev := range []sync.Event{
		{Kind: sync.EventState, Status: sync.Status{Replication: "pull", State: sync.StateStarting}},
		{Kind: sync.EventState, Status: sync.Status{Replication: "pull", State: sync.StateOffline}, Err: refused},
		{Kind: sync.EventState, Status: sync.Status{Replication: "pull", State: sync.StateStarting}},
		{Kind: sync.EventState, Status: sync.Status{Replication: "pull", State: sync.StateOffline}, Err: refused},
		{Kind: sync.EventProgress, Status: sync.Status{Replication: "pull", State: sync.StateOffline}},
		{Kind: sync.EventState, Status: sync.Status{Replication: "pull", State: sync.StateActive}},
		{Kind: sync.EventState, Status: sync.Status{Replication: "pull", State: sync.StateIdle}},
		{Kind: sync.EventState, Status: sync.Status{Replication: "pull", State: sync.StateStopped}},
	} {
		prev, seen := p.last[ev.Replication]
		p.last[ev.Replication] = ev
		if line, ok := p.stateLine(ev, prev, seen, p.trackOffline(ev)); ok {
			got = append(got, line)
		}
	}
	want := "pull: starting|pull: offline (connection refused); retrying until Ctrl-C|pull: active|pull: idle"
	if strings.Join(got, "|") != want {
		t.Errorf("state lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.ReplaceAll(want, "|", "\n"))
	}
}

// TestJSONArgLimit: stdin and @FILE share one limit, and going past it
// says so (issue 14, item 6).
func TestJSONArgLimit(t *testing.T) {
	defer func(old int64) { maxJSONArg = old }(maxJSONArg)
	maxJSONArg = 1 << 20
	big := `{"x":"` + strings.Repeat("a", 1<<20) + `"}`
	file := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(file, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		arg   string
		stdin io.Reader
		from  string
	}{{"-", strings.NewReader(big), "stdin"}, {"@" + file, nil, file}} {
		_, err := readJSONArg(c.arg, c.stdin)
		if exitCode(err) != exitUsage || err.Error() != "the JSON from "+c.from+" is larger than the 1 MiB limit" {
			t.Errorf("%s: %v", c.arg, err)
		}
	}
	fits := strings.Repeat(" ", 1<<20-2) + "{}"
	if b, err := readJSONArg("-", strings.NewReader(fits)); err != nil || len(b) != 1<<20 {
		t.Errorf("exactly the limit: %d bytes, %v", len(b), err)
	}
}
