package mobile

import (
	"runtime"
	"strconv"

	"github.com/settee/settee/localdb"
)

// The batch's thread. While InBatch runs the app's function, the store's
// write lock is held: a write the function makes through the Database
// instead of its Batch, on the same thread, would wait for itself for
// ever. The binding calls Go back on the thread (and so the goroutine)
// that called InBatch, so the goroutine tells such calls apart from other
// threads' writes, which must wait. Put, Delete and SaveAll join the
// batch, as Couchbase Lite's saves inside inBatch do; the other writes
// fail with bad_request.

// batchOwner is the batch in progress and the goroutine running it.
type batchOwner struct {
	g uint64
	b *localdb.Batch
}

// enterBatch records that goroutine g runs batch b.
func (d *Database) enterBatch(g uint64, b *localdb.Batch) {
	d.batch.Store(&batchOwner{g: g, b: b})
}

func (d *Database) leaveBatch() { d.batch.Store(nil) }

// batchOfCaller returns the batch in progress when the caller runs it (on
// its goroutine), else nil. Without a batch it costs one atomic load.
func (d *Database) batchOfCaller() *localdb.Batch {
	o := d.batch.Load()
	if o == nil || o.g != goid() {
		return nil
	}
	return o.b
}

// checkWrite is check for calls that write: inside the caller's own batch
// they would deadlock, so they fail.
func (d *Database) checkWrite() error {
	if err := d.check(); err != nil {
		return err
	}
	if d.batchOfCaller() != nil {
		return badRequest("inside InBatch, write through the Batch (only Put, Delete and SaveAll of the Database join it)")
	}
	return nil
}

// goid returns the current goroutine's id, read from the first line of
// its stack trace ("goroutine 18 [running]:"): Go offers no other way,
// and it is read only while a batch runs.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) <= len(prefix) {
		return 0
	}
	b = b[len(prefix):]
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	id, _ := strconv.ParseUint(string(b[:n]), 10, 64)
	return id
}
