package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/server"
	"github.com/settee/settee/sync"
	"github.com/settee/settee/sync/couch"
)

var demoHelp = cmdHelp{
	usage: "settee demo [--keep DIR]",
	about: `Show Settee at work with nothing to install: serve a hub database on a free
loopback port (Settee's own CouchDB-compatible server, in-process), make two
device stores, edit documents on both while they are "offline" (the same
document on both), sync each with the hub, show the conflict and how it
resolves, and sum up what crossed the wire.

Everything lives in a temporary directory removed at the end, unless
--keep DIR is given: then the stores stay there to look into with
"settee get", "settee conflicts" or "settee serve".`,
	examples: `  settee demo
  settee demo --keep /tmp/settee-demo && settee changes /tmp/settee-demo/bob.db`,
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flagSet("demo")
	keep := fs.String("keep", "", "keep the hub and device stores in this `DIR`")
	if _, err := parseFlags(fs, demoHelp, args, 0, 0, stdout); err != nil {
		return err
	}
	dir := *keep
	if dir == "" {
		if dir, err = os.MkdirTemp("", "settee-demo-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for _, f := range []string{"hub.db", "alice.db", "bob.db"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				return usageErrorf("--keep %s already holds %s: choose an empty directory", dir, f)
			}
		}
	}
	d := &demo{out: stdout, dir: dir, keep: *keep != "", start: time.Now()}
	defer d.close(&err)
	return d.run(ctx)
}

// demo is the state of one demo run: the hub and two devices.
type demo struct {
	out   io.Writer
	dir   string
	keep  bool
	start time.Time

	srv       *server.Server
	stopServe func() error      // stops srv.Serve and waits for it
	hub       string            // the hub database's URL
	authors   map[string]string // rev -> device, of the conflicting edits
	alice     *device
	bob       *device
}

// device is one "phone": a local store and its link to the hub.
type device struct {
	name string
	db   *localdb.DB
	hub  *couch.DB // the hub, as seen from this device; counts the traffic
	up   int64     // documents pushed, all syncs
	down int64     // documents pulled
}

func (d *demo) printf(format string, args ...any) { fmt.Fprintf(d.out, format, args...) }

func (d *demo) run(ctx context.Context) error {
	d.printf("Settee demo: one hub, two devices (alice, bob), in %s\n\n", d.dir)
	if err := d.startHub(); err != nil {
		return err
	}
	d.printf("1. The hub serves %s (Settee's CouchDB-compatible server)\n", d.hub)
	var err error
	if d.alice, err = d.newDevice("alice"); err != nil {
		return err
	}
	if d.bob, err = d.newDevice("bob"); err != nil {
		return err
	}

	d.printf("\n2. alice writes three documents, then both devices sync\n")
	for _, doc := range []struct{ id, body string }{
		{"shopping", `{"type":"list","items":["milk","bread"]}`},
		{"todo", `{"type":"todo","text":"water the plants","done":false}`},
		{"note", `{"type":"note","text":"the wifi password is on the fridge"}`},
	} {
		if err := d.alice.put(ctx, doc.id, doc.body); err != nil {
			return err
		}
	}
	if err := d.sync(ctx, d.alice); err != nil {
		return err
	}
	if err := d.sync(ctx, d.bob); err != nil {
		return err
	}

	d.printf("\n3. Offline, both edit \"shopping\"; bob adds \"recipe\", alice ticks \"todo\" off\n")
	d.authors = map[string]string{}
	for _, e := range []struct {
		dev  *device
		body string
	}{
		{d.alice, `{"type":"list","items":["milk","bread","eggs"]}`},
		{d.bob, `{"type":"list","items":["milk","bread","coffee"]}`},
	} {
		rev, err := e.dev.putRev(ctx, "shopping", e.body)
		if err != nil {
			return err
		}
		d.authors[rev] = e.dev.name
		d.printf("   %-6s shopping is now %s %s\n", e.dev.name+":", short(rev), e.body[strings.Index(e.body, "["):len(e.body)-1])
	}
	for _, e := range []struct {
		dev       *device
		id, body  string
		whatItDid string
	}{
		{d.bob, "recipe", `{"type":"note","text":"pancakes: eggs, milk, flour"}`, "adds recipe"},
		{d.alice, "todo", `{"type":"todo","text":"water the plants","done":true}`, "ticks todo off"},
	} {
		if err := e.dev.put(ctx, e.id, e.body); err != nil {
			return err
		}
		d.printf("   %-6s %s %s\n", e.dev.name+":", e.whatItDid, e.body)
	}

	d.printf("\n4. Back online, each syncs with the hub (alice, bob, alice again)\n")
	for _, dev := range []*device{d.alice, d.bob, d.alice} {
		if err := d.sync(ctx, dev); err != nil {
			return err
		}
	}
	for _, e := range []struct {
		dev *device
		id  string
	}{{d.alice, "recipe"}, {d.bob, "todo"}} {
		doc, err := e.dev.db.Get(ctx, e.id, localdb.GetOptions{})
		if err != nil {
			return fmt.Errorf("%s: %s: %w", e.dev.name, e.id, err)
		}
		d.printf("   %-6s has %s %s\n", e.dev.name+":", e.id, body(doc))
	}
	if err := d.showConflict(ctx, "shopping"); err != nil {
		return err
	}

	d.printf("\n5. bob resolves it by merging both lists, then bob and alice sync\n")
	merged, err := d.bob.mergeLists(ctx, "shopping")
	if err != nil {
		return err
	}
	res, err := resolveConflict(ctx, d.bob.db, "shopping", "", merged)
	if err != nil {
		return err
	}
	d.printf("   bob:   merged into %s %s, deleted %s\n", short(res.Rev), body(merged), strings.Join(shortAll(res.Deleted), ", "))
	for _, dev := range []*device{d.bob, d.alice} {
		if err := d.sync(ctx, dev); err != nil {
			return err
		}
	}
	for _, dev := range []*device{d.alice, d.bob} {
		doc, err := dev.db.Get(ctx, "shopping", localdb.GetOptions{Conflicts: true})
		if err != nil {
			return err
		}
		d.printf("   %-6s sees %s %s, %s\n", dev.name+":", short(doc.Rev), body(doc), plural(len(doc.Conflicts), "conflict"))
	}
	return d.summary(ctx)
}

// startHub serves the hub database on a free loopback port.
func (d *demo) startHub() error {
	srv, err := server.New(server.Config{Addr: "127.0.0.1:0", DBPath: filepath.Join(d.dir, "hub.db"), DBName: "notes"})
	if err != nil {
		return err
	}
	d.srv = srv
	ln, err := srv.Listen()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	d.stopServe = func() error { cancel(); return <-done }
	d.hub = "http://" + ln.Addr().String() + "/notes"
	return nil
}

func (d *demo) newDevice(name string) (*device, error) {
	db, err := localdb.Open(filepath.Join(d.dir, name+".db"), nil)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(d.hub)
	peer, err := newRemotePeer(&remote{URL: u, flags: remoteFlags{timeout: 30 * time.Second}, retries: -1})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &device{name: name, db: db, hub: peer}, nil
}

// sync runs one two-way sync of a device with the hub and prints what moved.
func (d *demo) sync(ctx context.Context, dev *device) error {
	before := dev.hub.Stats().Requests
	res, err := sync.Sync(ctx, newLocalPeer(dev.db), dev.hub, sync.Options{Retries: -1})
	if err != nil {
		return fmt.Errorf("%s: sync: %w", dev.name, err)
	}
	dev.up += res.Push.Stats.DocsWritten
	dev.down += res.Pull.Stats.DocsWritten
	d.printf("   %-6s synced: %d up, %d down (%s)\n", dev.name+":",
		res.Push.Stats.DocsWritten, res.Pull.Stats.DocsWritten, plural(dev.hub.Stats().Requests-before, "request"))
	return nil
}

// showConflict prints a document's leaves on both devices: the same winner
// everywhere, picked without talking.
func (d *demo) showConflict(ctx context.Context, id string) error {
	d.printf("   conflict on %q, the same on every replica:\n", id)
	for _, dev := range []*device{d.alice, d.bob} {
		doc, err := dev.db.Get(ctx, id, localdb.GetOptions{Conflicts: true})
		if err != nil {
			return err
		}
		if len(doc.Conflicts) == 0 {
			return fmt.Errorf("demo: expected a conflict on %s at %s", id, dev.name)
		}
		d.printf("   %-6s winner %s (%s's), conflicting %s (%s's)\n", dev.name+":", short(doc.Rev), d.authors[doc.Rev],
			strings.Join(shortAll(doc.Conflicts), ", "), d.authors[doc.Conflicts[0]])
	}
	d.printf("   (CouchDB's rule: the longest history wins, then the highest revision id;\n" +
		"    nothing is lost: the other version stays as a conflict until resolved)\n")
	return nil
}

// summary checks every replica holds the same documents and revisions and
// prints what crossed the wire.
func (d *demo) summary(ctx context.Context) error {
	d.stopHub() // the hub's file is then ours to read
	hubDB, err := localdb.Open(filepath.Join(d.dir, "hub.db"), nil)
	if err != nil {
		return err
	}
	defer hubDB.Close()
	want, err := leavesOf(ctx, hubDB)
	if err != nil {
		return err
	}
	for _, dev := range []*device{d.alice, d.bob} {
		got, err := leavesOf(ctx, dev.db)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("demo: %s and the hub disagree:\n%s\n%s", dev.name, strings.Join(got, " "), strings.Join(want, " "))
		}
	}
	d.printf("\n6. What crossed the wire\n")
	for _, dev := range []*device{d.alice, d.bob} {
		d.printf("   %-6s %s up, %d down; %s\n", dev.name+":", plural(dev.up, "doc"), dev.down, wireSummary(dev.hub.Stats()))
	}
	ids := map[string]bool{}
	for _, l := range want {
		id, _, _ := strings.Cut(l, " ")
		ids[id] = true
	}
	d.printf("   all three replicas agree: %d documents, the same revisions (%d leaves, tombstones included)\n", len(ids), len(want))
	d.printf("\nDone in %s.", time.Since(d.start).Round(time.Millisecond))
	return nil
}

// leavesOf lists "id rev" for every leaf of every document, in id order.
func leavesOf(ctx context.Context, db *localdb.DB) ([]string, error) {
	var out []string
	_, err := db.Changes(ctx, localdb.ChangesOptions{AllDocs: true}, func(c *localdb.Change) error {
		for _, r := range c.Revs {
			out = append(out, c.ID+" "+r)
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

// stopHub stops serving and closes the hub's database.
func (d *demo) stopHub() {
	// Close the devices' idle keep-alive connections first: the server's
	// graceful shutdown waits up to 5 s for connections that never sent a
	// request (the client's spare dials).
	for _, dev := range []*device{d.alice, d.bob} {
		if dev != nil {
			dev.hub.CloseIdleConnections()
		}
	}
	if d.stopServe != nil {
		_ = d.stopServe()
		d.stopServe = nil
	}
	if d.srv != nil {
		_ = d.srv.Close()
		d.srv = nil
	}
}

func (d *demo) close(errp *error) {
	d.stopHub()
	for _, dev := range []*device{d.alice, d.bob} {
		if dev != nil {
			if err := dev.db.Close(); err != nil && *errp == nil {
				*errp = err
			}
		}
	}
	if *errp != nil {
		return
	}
	if !d.keep {
		d.printf(" Files removed (settee demo --keep DIR keeps them).\n")
	} else {
		d.printf(" Files kept in %s: try\n   settee get %s shopping --revs\n   settee serve %s\n",
			d.dir, filepath.Join(d.dir, "bob.db"), filepath.Join(d.dir, "hub.db"))
	}
}
