package cryptvfs

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
)

// Layout of a page on disk. Every page of the database file, and every
// page image in its WAL and rollback journal, is sealed with AES-256-GCM
// in place: the ciphertext keeps the plaintext's offset, the tag and the
// nonce take the page's last Reserve bytes, which SQLite leaves to us
// because the store is made with that many reserved bytes per page
// (Create). Page 1 of the database file keeps its first HeaderSize bytes
// in the clear for the store's header (magic, salt, key check) instead of
// SQLite's constant "SQLite format 3\0", which a read puts back.
const (
	nonceSize = 12
	tagSize   = 16
	// Reserve is the number of bytes at the end of each page that hold a
	// page's tag and nonce.
	Reserve = tagSize + nonceSize
	// HeaderSize is the size of the store header at the start of the file.
	HeaderSize = 16
	saltSize   = 8
	checkSize  = 4
	keySize    = 32
)

// Magic starts every encrypted database file.
var Magic = [4]byte{'S', 'T', 'E', 0x01}

// sqliteMagic starts every plain SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// The kinds of file, in each page's associated data, so that a page
// sealed for one place fails authentication in any other.
const (
	kindDB      = 'D'
	kindWAL     = 'W'
	kindJournal = 'J'
)

// pageKey is the key of one store: the master key stretched with the
// store's salt (HKDF-SHA256), and a short check value kept in the header
// that tells a wrong key from a damaged page.
type pageKey struct {
	salt  [saltSize]byte
	check [checkSize]byte
	aead  cipher.AEAD
}

func deriveKey(master []byte, salt [saltSize]byte) (*pageKey, error) {
	out, err := hkdf.Key(sha256.New, master, salt[:], "settee cryptvfs v1 page key", keySize+checkSize)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(out[:keySize])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	k := &pageKey{salt: salt, aead: aead}
	copy(k.check[:], out[keySize:])
	clear(out)
	return k, nil
}

func newSalt() (s [saltSize]byte) {
	rand.Read(s[:])
	return s
}

// header is the store header written over page 1's first bytes.
func (k *pageKey) header() [HeaderSize]byte {
	var h [HeaderSize]byte
	copy(h[:4], Magic[:])
	copy(h[4:], k.salt[:])
	copy(h[4+saltSize:], k.check[:])
	return h
}

// Errors of the header (see parseHeader, VFS.CheckHeader).
var (
	// ErrPlain: the file is a plain SQLite database.
	ErrPlain = errors.New("cryptvfs: a plain SQLite file")
	// ErrNotOurs: the file is neither an encrypted store nor SQLite's.
	ErrNotOurs = errors.New("cryptvfs: not an encrypted store")
	// ErrWrongKey: the file is an encrypted store with another key.
	ErrWrongKey = errors.New("cryptvfs: wrong key")
)

// parseHeader reads a store header: the salt, or ErrPlain for a plain
// SQLite file, ErrNotOurs for anything else.
func parseHeader(h []byte) (salt [saltSize]byte, check [checkSize]byte, err error) {
	if len(h) < HeaderSize {
		return salt, check, ErrNotOurs
	}
	if subtle.ConstantTimeCompare(h[:HeaderSize], sqliteMagic) == 1 {
		return salt, check, ErrPlain
	}
	if [4]byte(h[:4]) != Magic {
		return salt, check, ErrNotOurs
	}
	copy(salt[:], h[4:])
	copy(check[:], h[4+saltSize:])
	return salt, check, nil
}

// IsEncrypted reports whether a file's first bytes are an encrypted
// store's header.
func IsEncrypted(h []byte) bool {
	_, _, err := parseHeader(h)
	return err == nil
}

func adFor(kind byte, pos int64) [9]byte {
	var ad [9]byte
	ad[0] = kind
	binary.BigEndian.PutUint64(ad[1:], uint64(pos))
	return ad
}

// seal encrypts the page p (len ps) into dst (len ps): dst[:start] is
// left to the caller, dst[start:ps-Reserve] gets the ciphertext, then the
// tag and a fresh random nonce.
func (k *pageKey) seal(dst, p []byte, start int, kind byte, pos int64) {
	ps := len(p)
	nonce := dst[ps-nonceSize:]
	rand.Read(nonce)
	ad := adFor(kind, pos)
	k.aead.Seal(dst[start:start], nonce, p[start:ps-Reserve], ad[:])
}

// open decrypts the page buf in place: buf[start:ps-Reserve] becomes the
// plaintext, and the reserved bytes zeros. It fails when the page was not
// sealed by this key at this place, or was changed since.
//
// The zeros matter: SQLite's WAL frame checksums cover the whole page,
// reserved bytes included, and recovery after a crash drops every frame
// from the first whose checksum fails. SQLite never writes the reserved
// bytes of a page, so a page read as zeros there is written back with
// zeros, checksummed over zeros, and read back (here) as zeros.
func (k *pageKey) open(buf []byte, start int, kind byte, pos int64) error {
	ps := len(buf)
	var nonce [nonceSize]byte
	copy(nonce[:], buf[ps-nonceSize:])
	ad := adFor(kind, pos)
	if _, err := k.aead.Open(buf[start:start], nonce[:], buf[start:ps-nonceSize], ad[:]); err != nil {
		return fmt.Errorf("cryptvfs: %w", err)
	}
	clear(buf[ps-Reserve:])
	return nil
}

// isZero reports whether b holds only zero bytes: a page never written
// (a file extended by a size hint), which no sealed page can be.
func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// CheckHeader checks a store header (a file's first HeaderSize bytes)
// against v's key: ErrPlain, ErrNotOurs or ErrWrongKey when it does not
// fit.
func (v *VFS) CheckHeader(h []byte) error {
	salt, check, err := parseHeader(h)
	if err != nil {
		return err
	}
	k, err := deriveKey(v.key, salt)
	if err != nil {
		return err
	}
	if k.check != check {
		return ErrWrongKey
	}
	return nil
}
