package couch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/internal/wire"
	"github.com/settee/settee/sync"
)

var (
	_ sync.StubReader       = (*DB)(nil)
	_ sync.AttachmentGetter = (*DB)(nil)
)

// ReadStubs reads revisions with every attachment a stub carrying its
// metadata (attachments=false, att_encoding_info=true): POST _bulk_get, or
// GET open_revs per document on a peer without _bulk_get
// (sync.StubReader). fn has the contract of BulkGet.
func (db *DB) ReadStubs(ctx context.Context, reqs []sync.BulkGetRequest, fn func(doc *couchdoc.Doc, revErr error) error) error {
	err := db.bulkGet(ctx, reqs, false, fn)
	if !errors.Is(err, sync.ErrNoBulkGet) {
		return err
	}
	for i := 0; i < len(reqs); {
		j := i + 1
		for j < len(reqs) && reqs[j].ID == reqs[i].ID {
			j++
		}
		revs := make([]string, 0, j-i)
		for _, r := range reqs[i:j] {
			revs = append(revs, r.Rev)
		}
		if err := db.openRevs(ctx, reqs[i].ID, revs, nil, false, fn); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// GetAttachment streams an attachment's bytes: GET /{db}/{id}/{name}?rev=
// with Range: bytes=offset- when offset > 0; ranged reports a 206 answer
// (sync.AttachmentGetter). The bytes come decoded (Accept-Encoding:
// identity). A missing document, revision or attachment is ErrNotFound.
func (db *DB) GetAttachment(ctx context.Context, id, rev, name string, offset int64) (io.ReadCloser, bool, error) {
	q := url.Values{}
	if rev != "" {
		q.Set("rev", rev)
	}
	r := &request{method: http.MethodGet, path: "/" + wire.EscapeDocID(id) + "/" + wire.EscapeAttachment(name), query: q, accept: "*/*"}
	if offset > 0 {
		r.header = map[string]string{"Range": "bytes=" + strconv.FormatInt(offset, 10) + "-"}
	}
	resp, err := db.do(ctx, r)
	if err != nil {
		return nil, false, err
	}
	ranged := resp.StatusCode == http.StatusPartialContent
	if want := "bytes " + strconv.FormatInt(offset, 10) + "-"; ranged && !strings.HasPrefix(resp.Header.Get("Content-Range"), want) {
		resp.Body.Close()
		return nil, false, fmt.Errorf("%s: attachment %q: asked for %s, got Content-Range %q", db.name, name, want, resp.Header.Get("Content-Range"))
	}
	return resp.Body, ranged, nil
}
