package mobile

import (
	"context"
	"encoding/json"
	"errors"
	gosync "sync"
	"sync/atomic"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/validate"
)

// errClosed is returned by calls on a closed Database, and on a Database
// the app constructed itself instead of calling Open.
var errClosed = errors.New("database is closed")

// Database is an open local store. Its methods are safe to call from any
// thread. Every error's message starts with its code (see ErrorCode):
// the CouchDB error name for the store's refusals ("not_found: ...",
// "conflict: ...", "bad_request: ...").
type Database struct {
	db     *localdb.DB
	ctx    context.Context // cancelled by Close: stops listeners and replicators
	cancel context.CancelFunc
	wg     gosync.WaitGroup // goroutines the Database owns

	mu          gosync.Mutex
	closed      bool
	replicators map[*Replicator]struct{}
	autoCompact *localdb.CompactPolicy // SetAutoCompaction; nil when off
	compacting  bool                   // an automatic compaction runs

	batch atomic.Pointer[batchOwner] // InBatch's, while it runs (batchguard.go)

	validator *validate.Validator // SetValidation's; nil when off
}

// Open opens the store at path, creating the file if it is missing. On
// Android pass a path under Context.getFilesDir(), on iOS one under the
// app's Application Support directory. Change listeners, live queries and
// continuous pushes hear of this process's writes at once and nothing runs
// while nobody writes; writes by another process (an app extension sharing
// the file) are not seen: open such a store with OpenShared. Swift sees
// this package function as one that does not throw: call Databases.Open
// there.
func Open(path string) (d *Database, err error) {
	defer recoverTo(&err)
	return open(path, localdb.WatchLocal)
}

// OpenShared opens a store that another process also writes (an iOS app
// extension or an Android service in its own process, through a shared
// container): the operating system reports the other process's writes
// (inotify on Android, kqueue on iOS), which listeners then see within
// milliseconds; it costs nothing while nothing is written.
func OpenShared(path string) (d *Database, err error) {
	defer recoverTo(&err)
	return open(path, localdb.WatchNotify)
}

// OpenEncrypted opens (or creates) the store at path encrypted at rest
// with key: 32 random bytes the app makes once (SecureRandom, SecRandom)
// and keeps in the Android Keystore or the iOS Keychain, never in a file
// or a log. Every page the store writes (file, WAL, journals, view
// indexes) is sealed with it. An existing store opened with another key,
// or a plain store opened with a key, is CodeWrongKey and changes
// nothing; a damaged page later is CodeFailedAuthentication. shared is
// OpenShared's: another process also writes the store.
func OpenEncrypted(path string, key []byte, shared bool) (d *Database, err error) {
	defer recoverTo(&err)
	if len(key) != localdb.KeySize {
		return nil, badRequest("the key is %d bytes, want %d", len(key), localdb.KeySize)
	}
	watch := localdb.WatchLocal
	if shared {
		watch = localdb.WatchNotify
	}
	return openWith(path, &localdb.Options{Watch: watch, Key: key})
}

func open(path string, watch localdb.WatchMode) (*Database, error) {
	return openWith(path, &localdb.Options{Watch: watch})
}

func openWith(path string, opts *localdb.Options) (*Database, error) {
	db, err := localdb.Open(path, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	logf(LevelInfo, "opened %s", path)
	return &Database{
		db: db, ctx: ctx, cancel: cancel,
		replicators: map[*Replicator]struct{}{},
	}, nil
}

// Close stops the Database's replicators and change listeners, waits for
// them, and closes the store. Closing twice is a no-op. Do not call it from
// inside a callback of this Database (it waits for the callbacks to end).
func (d *Database) Close() (err error) {
	defer recoverTo(&err)
	d.mu.Lock()
	if d.closed || d.db == nil {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	reps := make([]*Replicator, 0, len(d.replicators))
	for r := range d.replicators {
		reps = append(reps, r)
	}
	d.mu.Unlock()
	for _, r := range reps {
		_ = r.sup.Stop()
	}
	d.cancel()
	for _, r := range reps {
		_ = r.sup.Wait() // its last events are delivered
	}
	d.wg.Wait()
	err = d.db.Close()
	d.mu.Lock()
	v := d.validator
	d.validator = nil
	d.mu.Unlock()
	if v != nil {
		v.Close()
	}
	return err
}

// check returns ErrClosed after Close.
func (d *Database) check() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.db == nil {
		return errClosed
	}
	return nil
}

// Path returns the store's file path.
func (d *Database) Path() string {
	defer recoverLog("Path")
	if d.check() != nil {
		return ""
	}
	return d.db.Path()
}

// Info returns the database's summary as CouchDB's GET /{db} JSON:
// {"doc_count":N,"doc_del_count":N,"update_seq":N,"uuid":"..."}.
func (d *Database) Info() (infoJSON string, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return "", err
	}
	info, err := d.db.Info(d.ctx)
	if err != nil {
		return "", err
	}
	return marshal(info)
}

// Put writes a document given as CouchDB JSON. It must carry "_id"; to
// update, it carries the "_rev" of the revision it replaces (a conflict
// error otherwise). Inline attachments ("data", base64) and stubs of the
// parent's attachments are accepted. It returns the new revision id.
func (d *Database) Put(docJSON string) (rev string, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return "", err
	}
	doc, err := couchdoc.ParseDoc([]byte(docJSON))
	if err != nil {
		return "", err
	}
	if doc.ID == "" {
		return "", badRequest("the document has no _id")
	}
	if b := d.batchOfCaller(); b != nil {
		return b.Put(doc) // called by InBatch's function: joins its batch
	}
	return d.db.Put(d.ctx, doc)
}

// Get returns the winning revision of a document as JSON, with attachment
// stubs. A missing or deleted document is a "not_found" error.
func (d *Database) Get(docID string) (docJSON string, err error) {
	defer recoverTo(&err)
	return d.get(docID, localdb.GetOptions{})
}

// GetRev returns one revision of a document as JSON (a conflicting leaf or
// an older revision not yet compacted away).
func (d *Database) GetRev(docID, rev string) (docJSON string, err error) {
	defer recoverTo(&err)
	return d.get(docID, localdb.GetOptions{Rev: rev})
}

// GetWithConflicts is Get with the "_conflicts" member filled in.
func (d *Database) GetWithConflicts(docID string) (docJSON string, err error) {
	defer recoverTo(&err)
	return d.get(docID, localdb.GetOptions{Conflicts: true})
}

func (d *Database) get(id string, opts localdb.GetOptions) (string, error) {
	if err := d.check(); err != nil {
		return "", err
	}
	doc, err := d.db.Get(d.ctx, id, opts)
	if err != nil {
		return "", err
	}
	b, err := doc.MarshalJSON()
	return string(b), err
}

// Delete deletes a document: it writes a tombstone on top of rev, which
// must be the current leaf. It returns the tombstone's revision id.
func (d *Database) Delete(docID, rev string) (newRev string, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return "", err
	}
	if b := d.batchOfCaller(); b != nil {
		return b.Delete(docID, rev) // called by InBatch's function: joins its batch
	}
	return d.db.Delete(d.ctx, docID, rev)
}

// Compact drops the bodies of non-leaf revisions and unused attachments,
// then gives the free space back to the file system. It can take a while
// on a large store: call it from a background thread.
func (d *Database) Compact() (err error) {
	defer recoverTo(&err)
	if err := d.checkWrite(); err != nil {
		return err
	}
	return d.db.Compact(d.ctx)
}

func marshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
