package wire

import (
	"io"

	"github.com/settee/settee/couchdoc"
)

// MaxChangesRow bounds one changes row (normal or continuous feed, or the
// skipped members around the rows): a server streaming an endless row must
// cost bounded memory and fail with couchdoc.ErrTooLarge. A row of 8 MiB
// lists some 200,000 conflicting revisions.
var MaxChangesRow int64 = 8 << 20

// boundedReader fails once a single JSON value read through it (since the
// last mark) exceeds max bytes. The json.Decoder reading from it buffers
// ahead by at most one read, so the bound is approximate by that much.
type boundedReader struct {
	r     io.Reader
	n     int64
	start int64
	max   int64
	what  string
}

func newBounded(r io.Reader, max int64, what string) *boundedReader {
	return &boundedReader{r: r, max: max, what: what}
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.n-b.start > b.max {
		return 0, couchdoc.Errorf(couchdoc.ErrTooLarge, "%s larger than %d bytes", b.what, b.max)
	}
	k, err := b.r.Read(p)
	b.n += int64(k)
	return k, err
}

// mark starts counting a new value.
func (b *boundedReader) mark() { b.start = b.n }
