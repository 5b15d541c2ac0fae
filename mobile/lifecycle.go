package mobile

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
)

// OpenCopy makes a new store at path from a prebuilt seed store shipped
// with the app (copy it out of the app bundle to seedPath first), then
// opens it. The copy keeps the seed's documents and checkpoints but gets a
// UUID of its own, so every device has its own replication ids while its
// first sync with the seed's server fetches only what changed since the
// seed was built. If path already exists it is simply opened (the app can
// call OpenCopy on every start). Never copy a store file by hand: the copy
// would share the seed's identity.
func OpenCopy(seedPath, path string) (d *Database, err error) {
	defer recoverTo(&err)
	if _, serr := os.Stat(path); serr != nil {
		err = localdb.Clone(context.Background(), seedPath, path)
		if err != nil && !errors.Is(err, couchdoc.ErrFileExists) {
			return nil, err
		}
	}
	return Open(path)
}

// Purge removes documents for good, as CouchDB's _purge: requestJSON is
// {"id": ["rev", ...], ...} naming leaf revisions; the answer is
// {"id": [purged revs], ...}. Purges are local and never replicated; a
// purged document comes back from a pull only if it changes on the
// remote.
func (d *Database) Purge(requestJSON string) (resultJSON string, err error) {
	defer recoverTo(&err)
	if err := d.checkWrite(); err != nil {
		return "", err
	}
	var req map[string][]string
	if err := json.Unmarshal([]byte(requestJSON), &req); err != nil {
		return "", couchdoc.Errorf(couchdoc.ErrBadRequest, "purge request must be an object of id -> [rev]: %v", err)
	}
	res, err := d.db.Purge(d.ctx, req)
	if err != nil {
		return "", err
	}
	return marshal(res)
}

// Stats returns the store's sizes and counts as JSON: {"file", "active",
// "external"} bytes as CouchDB reports them, and the bytes of bodies,
// revision metadata, attachments, indexes and free pages, and the counts
// of docs, tombstones, revisions, leaves, conflicts and attachments, and
// of the attachment bodies not downloaded (lazy pulls) with their bytes.
// It reads the whole file: call it from a background thread.
func (d *Database) Stats() (statsJSON string, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return "", err
	}
	st, err := d.db.Stats(d.ctx)
	if err != nil {
		return "", err
	}
	return marshal(map[string]int64{
		"file": st.File, "active": st.Active, "external": st.External,
		"bodies": st.BodyBytes, "revision_metadata": st.RevMetaBytes, "attachments_bytes": st.AttachmentBytes,
		"indexes": st.IndexBytes, "free": st.FreeBytes, "other": st.OtherBytes,
		"docs": st.Docs, "tombstones": st.Tombstones, "revisions": st.Revisions,
		"leaves": st.Leaves, "conflicts": st.Conflicts, "attachments": st.Attachments,
		"attachments_not_downloaded": st.NotDownloaded, "attachment_bytes_not_downloaded": st.NotDownloadedBytes,
		"partial_downloads": st.PartialDownloads, "partial_download_bytes": st.PartialBytes,
	})
}

// CompactIfNeeded compacts when at least minFreeBytes and minFreeRatio
// (0 to 1) of the file are free and no replicator of this Database is
// running, and reports whether it did.
func (d *Database) CompactIfNeeded(minFreeBytes int64, minFreeRatio float64) (ran bool, err error) {
	defer recoverTo(&err)
	if err := d.checkWrite(); err != nil {
		return false, err
	}
	if d.replicating() {
		return false, nil
	}
	return d.db.CompactIfNeeded(d.ctx, localdb.CompactPolicy{MinFreeBytes: minFreeBytes, MinFreeRatio: minFreeRatio})
}

// replicating reports whether a replicator of this Database is running (a
// replicator started just after still works: compaction only slows it).
func (d *Database) replicating() bool {
	d.mu.Lock()
	reps := make([]*Replicator, 0, len(d.replicators))
	for r := range d.replicators {
		reps = append(reps, r)
	}
	d.mu.Unlock()
	for _, r := range reps {
		if r.running() {
			return true
		}
	}
	return false
}

// SetExpiration makes a document expire at unixMillis (milliseconds since
// 1970): from then on the store purges it by itself, while open or when next
// opened. The expiration is local to this device, not part of the document
// and never replicated. 0 clears it. A missing document is a not_found
// error.
func (d *Database) SetExpiration(docID string, unixMillis int64) (err error) {
	defer recoverTo(&err)
	if err := d.checkWrite(); err != nil {
		return err
	}
	var t time.Time
	if unixMillis != 0 {
		t = time.UnixMilli(unixMillis)
	}
	return d.db.SetExpiration(d.ctx, docID, t)
}

// Expiration returns when a document expires (unix milliseconds), 0 when
// it does not.
func (d *Database) Expiration(docID string) (unixMillis int64, err error) {
	defer recoverTo(&err)
	if err := d.check(); err != nil {
		return 0, err
	}
	t, err := d.db.Expiration(d.ctx, docID)
	if err != nil || t.IsZero() {
		return 0, err
	}
	return t.UnixMilli(), nil
}

// SetAutoCompaction turns automatic compaction on: whenever no replicator
// of this Database is running (right away, and each time the last one
// stops), the Database compacts in the background if at least
// minFreeBytes and minFreeRatio (0 to 1) of the file are free. Both 0
// turns it off.
func (d *Database) SetAutoCompaction(minFreeBytes int64, minFreeRatio float64) (err error) {
	defer recoverTo(&err)
	if minFreeBytes < 0 || minFreeRatio < 0 || minFreeRatio > 1 {
		return couchdoc.Errorf(couchdoc.ErrBadRequest, "minFreeBytes must be >= 0 and minFreeRatio between 0 and 1")
	}
	d.mu.Lock()
	if d.closed || d.db == nil {
		d.mu.Unlock()
		return errClosed
	}
	d.autoCompact = nil
	if minFreeBytes > 0 || minFreeRatio > 0 {
		d.autoCompact = &localdb.CompactPolicy{MinFreeBytes: minFreeBytes, MinFreeRatio: minFreeRatio}
	}
	d.mu.Unlock()
	d.maybeAutoCompact()
	return nil
}

// maybeAutoCompact starts a background CompactIfNeeded when a policy is
// set, no replicator runs and none is under way; the Database owns it
// (Close waits for it).
func (d *Database) maybeAutoCompact() {
	if d.replicating() {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.autoCompact == nil || d.compacting {
		return
	}
	p := *d.autoCompact
	d.compacting = true
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer recoverLog("auto-compaction")
		ran, err := d.db.CompactIfNeeded(d.ctx, p)
		switch {
		case err != nil && d.ctx.Err() == nil:
			logf(LevelWarn, "auto-compaction of %s: %v", d.db.Path(), err)
		case ran:
			logf(LevelInfo, "auto-compacted %s", d.db.Path())
		}
		d.mu.Lock()
		d.compacting = false
		d.mu.Unlock()
	}()
}
