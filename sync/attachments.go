package sync

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/settee/settee/couchdoc"
)

// Attachments says which attachment bodies a pull brings: all (Eager,
// the default), none (Lazy: documents arrive with their attachments'
// metadata and the target records the bodies as not downloaded), or only
// those of at most some length (LazyOver). Bodies left behind are
// fetched on demand (localpeer.FetchAttachment).
type Attachments struct {
	lazy bool
	over int64 // with lazy: bodies of at most this length come anyway
}

// Eager brings every attachment body: CouchDB's replication.
var Eager = Attachments{}

// Lazy brings no attachment body.
var Lazy = Attachments{lazy: true}

// LazyOver brings the bodies of attachments of at most n bytes and leaves
// the larger ones behind.
func LazyOver(n int64) Attachments { return Attachments{lazy: true, over: max(n, 0)} }

// IsLazy reports whether some bodies may be left behind.
func (a Attachments) IsLazy() bool { return a.lazy }

// String is the form ParseAttachments reads: "eager", "lazy" or
// "lazy-over=N".
func (a Attachments) String() string {
	switch {
	case !a.lazy:
		return "eager"
	case a.over == 0:
		return "lazy"
	}
	return "lazy-over=" + strconv.FormatInt(a.over, 10)
}

// ParseAttachments reads "eager", "lazy" or "lazy-over=BYTES" (the CLI's
// and the mobile layer's form); "" is eager.
func ParseAttachments(s string) (Attachments, error) {
	switch {
	case s == "" || s == "eager":
		return Eager, nil
	case s == "lazy":
		return Lazy, nil
	case strings.HasPrefix(s, "lazy-over="):
		n, err := strconv.ParseInt(strings.TrimPrefix(s, "lazy-over="), 10, 64)
		if err == nil && n >= 0 {
			return LazyOver(n), nil
		}
	}
	return Eager, fmt.Errorf("attachments %q: want eager, lazy or lazy-over=BYTES", s)
}

// StubReader is the optional capability of reading revisions with their
// attachments as stubs carrying full metadata (CouchDB's attachments=false
// with att_encoding_info=true), for lazy attachments.
type StubReader interface {
	// ReadStubs reads the requested revisions (AttsSince is ignored) with
	// the contract of BulkGetter.BulkGet for fn, every attachment a stub.
	ReadStubs(ctx context.Context, reqs []BulkGetRequest, fn func(doc *couchdoc.Doc, revErr error) error) error
}

// LazyWriter is the optional capability of a target that records
// attachments whose bodies it was not given (the local store).
type LazyWriter interface {
	// BulkDocsLazy is Peer.BulkDocs where an attachment stub the target
	// lacks is recorded with its metadata as not downloaded instead of
	// failing with missing_stub. Attachments may be streamed (Body).
	BulkDocsLazy(ctx context.Context, docs []*couchdoc.Doc) ([]couchdoc.DocResult, error)
}

// AttachmentGetter is the optional capability of serving one attachment's
// bytes (GET /{db}/{id}/{name}?rev=...), for fetching on demand.
type AttachmentGetter interface {
	// GetAttachment streams the decoded bytes of attachment name of
	// revision rev of document id, from byte offset on when the peer
	// honours a range (ranged true) or from the start (ranged false).
	// Close the body.
	GetAttachment(ctx context.Context, id, rev, name string, offset int64) (body io.ReadCloser, ranged bool, err error)
}

// checkLazy checks that the peers can do opts.Attachments.
func checkLazy(opts Options) error {
	if !opts.Attachments.lazy {
		return nil
	}
	_, okS := opts.Source.(StubReader)
	_, okT := opts.Target.(LazyWriter)
	_, okG := opts.Source.(AttachmentGetter)
	if !okS || !okT || (opts.Attachments.over > 0 && !okG) {
		return fmt.Errorf("%w (source %s, target %s)", ErrLazyUnsupported, opts.Source, opts.Target)
	}
	return nil
}
