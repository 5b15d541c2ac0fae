package attachstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/attachstore"
)

// TestDamagedChunk: a chunk whose bytes changed in the file after it was
// written (one bit flipped) is reported by CheckChunks, and refused by
// ReadAll and by a Reader with ErrDigestMismatch, the Reader having given
// only the good chunk before it; content that is not damaged still reads.
// A chunk without a checksum (written before schema 9) is not checked:
// its Reader says so (VerifiesContent) for package wire to sum its md5.
func TestDamagedChunk(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	data := randomBytes(2*attachstore.ChunkSize+5, 7)
	digest := writeContent(t, s, data)
	intact := writeContent(t, s, []byte("intact"))
	if err := s.checkChunks(t); err != nil {
		t.Fatalf("CheckChunks before damage: %v", err)
	}

	bad := bytes.Clone(data[attachstore.ChunkSize : 2*attachstore.ChunkSize])
	bad[100] ^= 0x04
	if _, err := s.db.Exec("UPDATE att_chunks SET data = ? WHERE digest = ? AND idx = 1", bad, digest); err != nil {
		t.Fatal(err)
	}
	if err := s.checkChunks(t); err == nil {
		t.Error("CheckChunks found no damaged chunk")
	}
	if _, err := attachstore.ReadAll(ctx, s.content, digest); !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Errorf("ReadAll of damaged content: %v, want ErrDigestMismatch", err)
	}
	got, err := readOdd(attachstore.NewReader(ctx, s.chunk, s.crc, digest, int64(len(data))))
	if !errors.Is(err, couchdoc.ErrDigestMismatch) {
		t.Errorf("Reader of damaged content: %v, want ErrDigestMismatch", err)
	}
	if !bytes.Equal(got, data[:attachstore.ChunkSize]) {
		t.Errorf("Reader gave %d bytes before the damaged chunk, want the %d of the good one", len(got), attachstore.ChunkSize)
	}
	if b, err := attachstore.ReadAll(ctx, s.content, intact); err != nil || string(b) != "intact" {
		t.Errorf("ReadAll of intact content: %q, %v", b, err)
	}

	// As a chunk written before schema 9.
	if _, err := s.db.Exec("UPDATE att_chunks SET crc = NULL WHERE digest = ? AND idx = 1", digest); err != nil {
		t.Fatal(err)
	}
	if err := s.checkChunks(t); err != nil {
		t.Errorf("CheckChunks with the chunk's checksum gone: %v", err)
	}
	r := attachstore.NewReader(ctx, s.chunk, s.crc, digest, int64(len(data)))
	if r.VerifiesContent() {
		t.Error("VerifiesContent = true for a chunk without a checksum")
	}
	if got, err := readOdd(r); err != nil || len(got) != len(data) {
		t.Errorf("Reader of unchecked content: %d bytes, %v", len(got), err)
	}
	if !attachstore.NewReader(ctx, s.chunk, s.crc, intact, 6).VerifiesContent() {
		t.Error("VerifiesContent = false for other content")
	}
}

// TestReaderShortContent: a Reader whose content has fewer bytes than
// its length (a chunk gone, or no such content) fails with
// io.ErrUnexpectedEOF rather than ending early.
func TestReaderShortContent(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	data := randomBytes(attachstore.ChunkSize+10, 3)
	digest := writeContent(t, s, data)
	if _, err := s.db.Exec("DELETE FROM att_chunks WHERE digest = ? AND idx = 1", digest); err != nil {
		t.Fatal(err)
	}
	if got, err := readOdd(attachstore.NewReader(ctx, s.chunk, s.crc, digest, int64(len(data)))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Reader of content missing a chunk: %d bytes, %v; want io.ErrUnexpectedEOF", len(got), err)
	}
	unknown := md5Of([]byte("never stored"))
	if _, err := readOdd(attachstore.NewReader(ctx, s.chunk, s.crc, unknown, 12)); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Reader of unknown content: %v, want io.ErrUnexpectedEOF", err)
	}
	if s.have(t, unknown) {
		t.Error("HaveContent of unknown content = true")
	}
}
