package query

import (
	"fmt"
	"net/http"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/mango"
)

// mangoError is an error CouchDB's mango_error module would give: its
// name, reason and status.
func mangoError(status int, name, format string, args ...any) *couchdoc.Error {
	return &couchdoc.Error{Status: status, Name: name, Reason: fmt.Sprintf(format, args...)}
}

var (
	// ErrNoUsableIndex is a sort no index can serve.
	ErrNoUsableIndex = mangoError(http.StatusBadRequest, "no_usable_index", "No index exists for this sort, try indexing by the sort fields.")
	// ErrMixedSort is a sort, or an index's fields, in both directions.
	ErrMixedSort = mango.ErrMixedSort
	// ErrIndexNotFound is a DeleteIndex of an index that does not exist; it
	// is a couchdoc.ErrNotFound.
	ErrIndexNotFound = couchdoc.Errorf(couchdoc.ErrNotFound, "missing")
)
