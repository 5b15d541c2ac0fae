package attachstore_test

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/base64"
	"math/rand"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/attachstore"
	"github.com/settee/settee/localdb/localdbtest"
)

// store is a store file and the read statements of content, prepared on
// its pool as the store's read pool prepares them.
type store struct {
	db                  *sql.DB
	content, chunk, crc *sql.Stmt
}

func openStore(t *testing.T) *store {
	t.Helper()
	s := &store{db: localdbtest.SQLFile(t)}
	for q, dst := range map[string]**sql.Stmt{attachstore.QContent: &s.content, attachstore.QChunk: &s.chunk, attachstore.QNoCRC: &s.crc} {
		st, err := s.db.Prepare(q)
		if err != nil {
			t.Fatalf("prepare %q: %v", q, err)
		}
		t.Cleanup(func() { st.Close() })
		*dst = st
	}
	return s
}

// update runs fn in one write transaction, committed unless fn fails.
func (s *store) update(t *testing.T, fn func(tx *sql.Tx) error) error {
	t.Helper()
	tx, err := s.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return nil
}

// have reports whether content digest is stored, as a write sees it.
func (s *store) have(t *testing.T, digest string) bool {
	t.Helper()
	var ok bool
	s.update(t, func(tx *sql.Tx) (err error) {
		ok, err = attachstore.HaveContent(tx, digest)
		return err
	})
	return ok
}

// checkChunks runs CheckChunks in a read transaction.
func (s *store) checkChunks(t *testing.T) error {
	t.Helper()
	tx, err := s.db.BeginTx(context.Background(), &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	return attachstore.CheckChunks(context.Background(), tx)
}

// randomBytes returns n bytes that differ from chunk to chunk, so that
// chunks read out of order or twice do not compare equal.
func randomBytes(n int, seed int64) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

func md5Of(b []byte) string {
	sum := md5.Sum(b)
	return "md5-" + base64.StdEncoding.EncodeToString(sum[:])
}

// writeContent stores data with WriteData and returns its digest.
func writeContent(t *testing.T, s *store, data []byte) string {
	t.Helper()
	var digest string
	var length int64
	err := s.update(t, func(tx *sql.Tx) (err error) {
		digest, length, err = attachstore.WriteData(tx, &couchdoc.Attachment{Name: "a", Data: data}, -1, true)
		return err
	})
	if err != nil {
		t.Fatalf("WriteData: %v", err)
	}
	if length != int64(len(data)) {
		t.Fatalf("WriteData of %d bytes gave length %d", len(data), length)
	}
	return digest
}
