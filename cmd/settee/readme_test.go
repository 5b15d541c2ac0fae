package main

import (
	"bufio"
	"context"
	"fmt"
	"go/format"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/settee/settee/internal/testpeer"
)

// readmeBlock is one fenced code block of the README.
type readmeBlock struct {
	line int    // the line of its opening fence
	info string // the fence's info string: "go", "sh", "sh couchdb", ...
	text string
}

// readmeBlocks returns the fenced code blocks of a Markdown file.
func readmeBlocks(t *testing.T, path string) []readmeBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []readmeBlock
	var cur *readmeBlock
	var body strings.Builder
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```") && !strings.HasPrefix(line, " "):
			cur = &readmeBlock{line: n, info: strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))}
			body.Reset()
		case cur != nil && trimmed == "```":
			cur.text = body.String()
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s: the block of line %d is not closed", path, cur.line)
	}
	return blocks
}

// TestREADME checks every code block of the repository's README.md, as
// the comment at its top says: ```go blocks are whole programs and must
// build against this module; ```sh blocks run in order, as one script, in
// a temporary directory with the settee under test first on PATH (the
// README's serve port 127.0.0.1:5985 replaced by a free one, and the
// server stopped at the end); ```sh couchdb blocks join them when
// SETTEE_COUCHDB_URL is set (its host and credentials replace the
// README's 127.0.0.1:5984 and admin:adminpw); ```sh repo blocks name the
// commands of a fresh checkout: scripts must exist, and `go run
// ./cmd/settee ARGS` runs as `settee ARGS`; the one ```sh module block is
// how an app uses the module, followed in a new module where the Go
// blocks are built; ```text is not code. Any other fence fails, so a new
// block is never left unchecked.
func TestREADME(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlocks(t, filepath.Join(root, "README.md"))
	couchURL := os.Getenv("SETTEE_COUCHDB_URL")
	var goBlocks []readmeBlock
	var install *readmeBlock
	var script strings.Builder
	var shRan, couchSkipped int
	for _, b := range blocks {
		switch b.info {
		case "go":
			goBlocks = append(goBlocks, b)
		case "sh":
			fmt.Fprintf(&script, "# README.md line %d\n%s", b.line, b.text)
			shRan++
		case "sh couchdb":
			if couchURL == "" {
				couchSkipped++
				continue
			}
			fmt.Fprintf(&script, "# README.md line %d (CouchDB)\n%s", b.line, couchdbBlock(t, b.text, couchURL))
			shRan++
		case "sh repo":
			checkRepoBlock(t, root, b)
		case "sh module":
			if install != nil {
				t.Errorf("README.md line %d: a second sh module block", b.line)
			}
			install = &b
		case "text":
		default:
			t.Errorf("README.md line %d: fence %q: tag code blocks go, sh, sh couchdb, sh repo or text (see the comment at the top of README.md)", b.line, b.info)
		}
	}
	if couchSkipped > 0 {
		t.Logf("%d ```sh couchdb block(s) of README.md not run: set SETTEE_COUCHDB_URL=http://admin:pw@127.0.0.1:5984 to run them", couchSkipped)
	}
	if len(goBlocks) == 0 || shRan == 0 || install == nil {
		t.Fatalf("README.md has %d go, %d sh and no sh module block: the test found nothing to check", len(goBlocks), shRan)
	}
	t.Run("Go", func(t *testing.T) { buildGoBlocks(t, root, *install, goBlocks) })
	t.Run("Shell", func(t *testing.T) { runShellBlocks(t, script.String()) })
}

// couchdbBlock points a CouchDB block at SETTEE_COUCHDB_URL's server.
func couchdbBlock(t *testing.T, text, couchURL string) string {
	u, err := url.Parse(couchURL)
	if err != nil {
		t.Fatalf("SETTEE_COUCHDB_URL: %v", err)
	}
	text = strings.ReplaceAll(text, "admin:adminpw@", u.User.String()+"@")
	return strings.ReplaceAll(text, "127.0.0.1:5984", u.Host)
}

// checkRepoBlock checks the commands of a fresh checkout: scripts exist
// and are executable; `go run ./cmd/settee ARGS` runs as the built settee.
func checkRepoBlock(t *testing.T, root string, b readmeBlock) {
	for _, line := range strings.Split(strings.TrimSpace(b.text), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "go" && f[1] == "run" && f[2] == "./cmd/settee":
			ok(t, f[3:]...)
		case len(f) >= 1 && strings.HasPrefix(f[0], "./"):
			st, err := os.Stat(filepath.Join(root, f[0]))
			if err != nil || st.Mode()&0o111 == 0 {
				t.Errorf("README.md line %d: %s is not an executable file of the repository", b.line, f[0])
			}
		default:
			t.Errorf("README.md line %d: a ```sh repo block holds go run ./cmd/settee or ./scripts lines, not %q", b.line, line)
		}
	}
}

// buildGoBlocks follows the README's install block in a new module (its
// "git clone URL DIR" stands for a link to this checkout, and the
// checkout's go.sum for the checksum database, so that nothing is
// downloaded), then builds each Go block there as a package of its own
// and runs it twice against a settee serve of its own.
func buildGoBlocks(t *testing.T, root string, install readmeBlock, blocks []readmeBlock) {
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	var script strings.Builder
	script.WriteString("set -euxo pipefail\n")
	for _, line := range strings.Split(strings.TrimSpace(install.text), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "git" && f[1] == "clone" {
			fmt.Fprintf(&script, "ln -s %q %q\n", root, f[3])
			continue
		}
		script.WriteString(line + "\n")
	}
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	// The programs talk to the quick start's server: one of their own.
	hub := serveBinary(t, filepath.Join(dir, "hub"), nil)
	for i, b := range blocks {
		if !strings.HasPrefix(strings.TrimSpace(b.text), "package main") {
			t.Errorf("README.md line %d: a go block is a whole program (package main)", b.line)
			continue
		}
		if src, err := format.Source([]byte(b.text)); err != nil || string(src) != b.text {
			t.Errorf("README.md line %d: the go block is not gofmt'ed (%v)", b.line, err)
		}
		pkg := filepath.Join(app, fmt.Sprintf("block%d", i))
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		src := strings.ReplaceAll(b.text, "http://127.0.0.1:5985", hub)
		if err := os.WriteFile(filepath.Join(pkg, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = app
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v (blockN is the Go block N of README.md, counting from 0)\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	run("go", "mod", "init", "example.com/app")
	run("bash", "-c", script.String())
	bin := filepath.Join(dir, "bin")
	run("go", "build", "-o", bin+string(os.PathSeparator), "./...")
	// Each program runs twice, in a directory of its own: what it writes
	// must not make a second run fail, and a branch it shows (the
	// conflict's) must run.
	for i, b := range blocks {
		work := filepath.Join(dir, fmt.Sprintf("run%d", i))
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 2; n++ {
			cmd := exec.CommandContext(ctx, filepath.Join(bin, fmt.Sprintf("block%d", i)))
			cmd.Dir = work
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("README.md line %d: run %d of the Go program: %v\n%s", b.line, n, err, out)
			}
			if strings.Contains(b.text, `"conflict:"`) && !strings.Contains(string(out), "conflict:") {
				t.Errorf("README.md line %d: run %d of the Go program did not show its conflict:\n%s", b.line, n, out)
			}
		}
	}
}

// runShellBlocks runs the script in a temporary directory, the settee
// under test on PATH, and stops what it left running.
func runShellBlocks(t *testing.T, script string) {
	dir := t.TempDir()
	// The quick start's server, the team hub's and its cloud's.
	for _, addr := range []string{"127.0.0.1:5985", "127.0.0.1:5986", "127.0.0.1:5987"} {
		script = strings.ReplaceAll(script, addr, fmt.Sprintf("127.0.0.1:%d", testpeer.FreePort(t)))
	}
	// Trace each command, so a failure shows which one.
	script = "set -euxo pipefail\n" + script
	out, err := os.Create(filepath.Join(dir, "script.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "PATH="+filepath.Dir(settee)+string(os.PathListSeparator)+os.Getenv("PATH"))
	// The script's own output file (not a pipe): a server it started in
	// the background must not hold the test up.
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) // the background server
	}
	if err != nil {
		b, _ := os.ReadFile(out.Name())
		t.Fatalf("the README's sh blocks failed: %v\n%s", err, b)
	}
	// What the quick start promises: the merge reached the other device,
	// with no conflict left.
	var doc struct {
		Items     []string `json:"items"`
		Conflicts []string `json:"_conflicts"`
	}
	mustJSON(t, ok(t, "get", filepath.Join(dir, "phone.db"), "shopping"), &doc)
	if strings.Join(doc.Items, ",") != "milk,eggs,tea" || len(doc.Conflicts) != 0 {
		t.Errorf("after the quick start phone.db has %+v", doc)
	}
	// What the team hub promises: ben's device has what ana wrote.
	var visit struct {
		Site string `json:"site"`
	}
	mustJSON(t, ok(t, "get", filepath.Join(dir, "ben.db"), "visit-1"), &visit)
	if visit.Site != "north well" {
		t.Errorf("ben.db's visit-1 is %+v", visit)
	}
}
