package localdb

import (
	"context"
	"database/sql"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/attachstore"
)

// inlineMax is the largest attachment returned inline (Data) by reads with
// attachments; larger ones come as a lazily opened Body.
const inlineMax = 64 << 10

// storedAtt is one attachment of a stored revision.
type storedAtt struct {
	Name        string
	ContentType string
	Digest      string
	Length      int64
	RevPos      int
	Encoding    string
	// Missing: the store lacks the bytes (no revision holds them).
	Missing bool
}

func (a *storedAtt) stub() *couchdoc.Attachment {
	return &couchdoc.Attachment{Name: a.Name, ContentType: a.ContentType, Digest: a.Digest, Length: a.Length, RevPos: a.RevPos, Stub: true,
		Encoding: a.Encoding, NotDownloaded: a.Missing}
}

// revAtts reads the attachments of every stored revision of a document, by
// revision id.
func (w *wtx) revAtts(docID int64) (map[string]map[string]*storedAtt, error) {
	s, err := w.stmt(qRevAtts)
	if err != nil {
		return nil, err
	}
	rows, err := s.QueryContext(w.ctx, docID)
	if err != nil {
		return nil, err
	}
	return scanRevAtts(rows)
}

func scanRevAtts(rows *sql.Rows) (map[string]map[string]*storedAtt, error) {
	defer rows.Close()
	out := make(map[string]map[string]*storedAtt)
	for rows.Next() {
		var rev string
		a := &storedAtt{}
		if err := rows.Scan(&rev, &a.Name, &a.Digest, &a.ContentType, &a.Length, &a.RevPos, &a.Encoding, &a.Missing); err != nil {
			return nil, err
		}
		if out[rev] == nil {
			out[rev] = make(map[string]*storedAtt)
		}
		out[rev][a.Name] = a
	}
	return out, rows.Err()
}

// attReader streams content digest, of length bytes, from the read pool.
func (db *DB) attReader(ctx context.Context, digest string, length int64) *attachstore.Reader {
	return attachstore.NewReader(ctx, db.reads.stmts[attachstore.QChunk], db.reads.stmts[attachstore.QNoCRC], digest, length)
}

// querier is what reads need of a *sql.Tx or *sql.DB.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}
