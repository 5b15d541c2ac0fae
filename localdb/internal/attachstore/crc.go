package attachstore

import (
	"context"
	"database/sql"
	"fmt"
	"hash/crc32"

	"github.com/settee/settee/couchdoc"
)

// Chunk checksums.
//
// Content is recorded under its md5 digest only once its bytes were checked
// against it (WriteData, UseStaged, the end of a partial download), and
// every chunk keeps the CRC-32C of its bytes (schema 9). A reader checks
// each chunk against its CRC as it reads it, so bytes changed on disk
// since are refused (couchdoc.ErrDigestMismatch) without an md5 of the
// whole content: CRC-32C runs in hardware on amd64 and arm64, the md5
// that package wire computed over every attachment body it sent was an
// eighth of settee serve's CPU in a pull with attachments. Chunks stored
// before schema 9 have no CRC: their readers say so (VerifiesContent), and
// package wire sums their md5 as before.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// chunkCRC is the checksum kept with a chunk's bytes.
func chunkCRC(b []byte) int64 { return int64(crc32.Checksum(b, castagnoli)) }

// CheckChunk fails when a chunk's bytes differ from its checksum.
func CheckChunk(digest string, idx int64, data []byte, crc sql.NullInt64) error {
	if crc.Valid && chunkCRC(data) != crc.Int64 {
		return couchdoc.Errorf(couchdoc.ErrDigestMismatch, "attachment content %s: chunk %d does not match its checksum: the file is damaged", digest, idx)
	}
	return nil
}

// CheckChunks reads every chunk that has a checksum and reports those whose
// bytes no longer match it (localdb's CheckInvariants).
func CheckChunks(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "SELECT digest, idx, data, crc FROM att_chunks WHERE crc IS NOT NULL")
	if err != nil {
		return err
	}
	defer rows.Close()
	var bad []string
	for rows.Next() {
		var digest string
		var idx int64
		var data sql.RawBytes
		var crc sql.NullInt64
		if err := rows.Scan(&digest, &idx, &data, &crc); err != nil {
			return err
		}
		if CheckChunk(digest, idx, data, crc) != nil {
			bad = append(bad, fmt.Sprintf("%s #%d", digest, idx))
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d attachment chunks do not match their checksum: %v", len(bad), bad[:min(len(bad), 5)])
	}
	return nil
}
