package localdb

import (
	"errors"

	"github.com/settee/settee/couchdoc"
)

// The sentinel errors of the store, to match with errors.Is.
var (
	// ErrClosed is returned by calls on a closed DB.
	ErrClosed = errors.New("localdb: database is closed")
	// ErrStoreOpen: Remove was asked to delete a store this process has open.
	ErrStoreOpen = errors.New("localdb: the store is open in this process")
	// ErrNoConflict: the document has a single live leaf, so there is no
	// conflict to resolve.
	ErrNoConflict = errors.New("localdb: the document has no conflicts")
	// ErrAttachmentNotDownloaded: the store has the attachment's metadata but
	// not its bytes. It is couchdoc.ErrAttachmentNotDownloaded.
	ErrAttachmentNotDownloaded = couchdoc.ErrAttachmentNotDownloaded
	// errBatchOver is returned by a Batch used after its DB.Batch returned.
	errBatchOver = errors.New("localdb: the batch is over (use the handle inside the batch function only)")
	// ErrNoStore: the path holds no Settee store (missing or empty file)
	// and Options.NoCreate forbade making one.
	ErrNoStore = errors.New("localdb: no Settee store")
	// ErrNotStore: the file belongs to another program (another
	// application_id, or tables that are not ours) or is not SQLite.
	ErrNotStore = errors.New("localdb: not a Settee store")
	// ErrNewerStore: the store was written by a newer version of Settee.
	ErrNewerStore = errors.New("localdb: written by a newer version of Settee")
)
