package cryptvfs

import (
	"errors"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// readDB reads n bytes at off of the database file. A read of one whole
// page is decrypted in place; any other (the header, read before SQLite
// knows the page size) decrypts the pages it touches in the scratch
// buffer.
func (f *file) readDB(tls *libc.TLS, buf uintptr, n int, off int64) int32 {
	ps := int64(f.v.pageSize)
	if int64(n) == ps && off%ps == 0 {
		rc := f.uread(tls, buf, n, off)
		return f.openDBPage(tls, mem(buf, n), rc, off)
	}
	out := mem(buf, n)
	short := false
	for p := off / ps * ps; p < off+int64(n); p += ps {
		rc := f.uread(tls, f.scratch, int(ps), p)
		if rc != sqlite3.SQLITE_OK && rc != sqlite3.SQLITE_IOERR_SHORT_READ {
			return rc
		}
		b := mem(f.scratch, int(ps))
		if rc == sqlite3.SQLITE_IOERR_SHORT_READ && isZero(b) {
			short = true
		} else if rc := f.openDBPage(tls, b, rc, p); rc != sqlite3.SQLITE_OK {
			return rc
		}
		lo, hi := max(p, off), min(p+ps, off+int64(n))
		copy(out[lo-off:hi-off], b[lo-p:hi-p])
	}
	if short {
		return sqlite3.SQLITE_IOERR_SHORT_READ
	}
	return sqlite3.SQLITE_OK
}

// openDBPage decrypts page b of the database file, read at off with
// result rc. Page 1 also carries the store header, which it checks.
func (f *file) openDBPage(tls *libc.TLS, b []byte, rc int32, off int64) int32 {
	if rc != sqlite3.SQLITE_OK && rc != sqlite3.SQLITE_IOERR_SHORT_READ {
		return rc
	}
	if isZero(b) {
		return rc
	}
	if rc == sqlite3.SQLITE_IOERR_SHORT_READ {
		// A page cut short: no sealed page ends early.
		f.v.fail(errors.New("cryptvfs: page cut short"), describe(kindDB, off/int64(len(b))+1, len(b)))
		return sqlite3.SQLITE_IOERR_DATA
	}
	start := 0
	if off == 0 {
		if rc := f.useHeader(b[:HeaderSize]); rc != sqlite3.SQLITE_OK {
			return rc
		}
		start = HeaderSize
	} else if _, rc := f.keyForRead(tls); rc != sqlite3.SQLITE_OK {
		return rc
	}
	pg := off/int64(len(b)) + 1
	if err := f.key.open(b, start, kindDB, pg); err != nil {
		f.v.fail(err, describe(kindDB, pg, len(b)))
		return sqlite3.SQLITE_IOERR_DATA
	}
	if off == 0 {
		copy(b, sqliteMagic)
	}
	return sqlite3.SQLITE_OK
}

// ErrNoReserve: SQLite wrote a page 1 with another page size, or without
// Reserve bytes per page (a file that Create did not make).
var ErrNoReserve = errors.New("cryptvfs: the database has no reserved bytes for the encryption")

// ErrReserveUsed: SQLite wrote a WAL page whose reserved bytes are not
// zero, which the encryption cannot give back as they were.
var ErrReserveUsed = errors.New("cryptvfs: a page's reserved bytes are in use")

// fits reports whether page 1's plaintext declares our page size and
// room for the tag and nonce.
func fits(p1 []byte, ps int) bool {
	size := int(p1[16])<<8 | int(p1[17])
	if size == 1 {
		size = 65536
	}
	return size == ps && int(p1[20]) >= Reserve
}

// useHeader takes the key from a store header read from disk.
func (f *file) useHeader(h []byte) int32 {
	salt, check, err := parseHeader(h)
	if err != nil {
		f.v.fail(err, "its header")
		return sqlite3.SQLITE_IOERR_DATA
	}
	if f.key == nil || f.key.salt != salt {
		k, err := deriveKey(f.v.key, salt)
		if err != nil {
			f.v.fail(err, "its header")
			return sqlite3.SQLITE_IOERR_DATA
		}
		if k.check != check {
			f.v.fail(ErrWrongKey, "its header")
			return sqlite3.SQLITE_IOERR_DATA
		}
		f.key = k
	}
	return sqlite3.SQLITE_OK
}

// readHeader reads the store header from disk: ok false when the file
// has none yet (empty).
func (f *file) readHeader(tls *libc.TLS) (ok bool, rc int32) {
	p := tls.Alloc(HeaderSize)
	defer tls.Free(HeaderSize)
	rc = f.uread(tls, p, HeaderSize, 0)
	h := mem(p, HeaderSize)
	if rc == sqlite3.SQLITE_IOERR_SHORT_READ && isZero(h) {
		return false, sqlite3.SQLITE_OK
	}
	if rc != sqlite3.SQLITE_OK {
		return false, rc
	}
	return true, f.useHeader(h)
}

// keyForRead is the database's key, read from its header if need be.
func (f *file) keyForRead(tls *libc.TLS) (*pageKey, int32) {
	if f.key != nil {
		return f.key, sqlite3.SQLITE_OK
	}
	ok, rc := f.readHeader(tls)
	if rc != sqlite3.SQLITE_OK {
		return nil, rc
	}
	if !ok {
		f.v.fail(ErrNotOurs, "its header")
		return nil, sqlite3.SQLITE_IOERR_DATA
	}
	return f.key, sqlite3.SQLITE_OK
}

// keyForWrite is the database's key, made with a new salt for a file
// that has none yet.
func (f *file) keyForWrite(tls *libc.TLS) (*pageKey, int32) {
	if f.key != nil {
		return f.key, sqlite3.SQLITE_OK
	}
	ok, rc := f.readHeader(tls)
	if rc != sqlite3.SQLITE_OK {
		return nil, rc
	}
	if !ok {
		salt := newSalt()
		if f.salt != nil {
			salt = *f.salt
		}
		k, err := deriveKey(f.v.key, salt)
		if err != nil {
			return nil, sqlite3.SQLITE_IOERR_WRITE
		}
		f.key = k
	}
	return f.key, sqlite3.SQLITE_OK
}

// writeDB writes whole pages of the database file, sealed.
func (f *file) writeDB(tls *libc.TLS, buf uintptr, n int, off int64) int32 {
	ps := f.v.pageSize
	if n%ps != 0 || off%int64(ps) != 0 {
		return sqlite3.SQLITE_IOERR_WRITE
	}
	k, rc := f.keyForWrite(tls)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	src := mem(buf, n)
	dst := mem(f.scratch, ps)
	for i := 0; i < n; i += ps {
		p := off + int64(i)
		start := 0
		if p == 0 {
			if !fits(src[:ps], ps) {
				// A file not made by Create: its pages have no room.
				f.v.fail(ErrNoReserve, "its header")
				return sqlite3.SQLITE_IOERR_WRITE
			}
			h := k.header()
			copy(dst, h[:])
			start = HeaderSize
		}
		k.seal(dst, src[i:i+ps], start, kindDB, p/int64(ps)+1)
		if rc := f.uwrite(tls, f.scratch, ps, p); rc != sqlite3.SQLITE_OK {
			return rc
		}
	}
	return sqlite3.SQLITE_OK
}

// The WAL: a 32-byte header, then frames of a 24-byte header and a page.
const (
	walHeader      = 32
	walFrameHeader = 24
)

// walPage is the offset of frame i's page.
func (f *file) walPage(i int64) int64 {
	return walHeader + i*int64(f.v.pageSize+walFrameHeader) + walFrameHeader
}

// walFrames is the range of frames whose pages a range [off, end)
// touches; first > last when it touches none.
func (f *file) walFrames(off, end int64) (first, last int64) {
	ps := int64(f.v.pageSize)
	fs := ps + walFrameHeader
	const base = walHeader + walFrameHeader
	if end <= base {
		return 0, -1
	}
	last = (end - base - 1) / fs
	if x := off - base - ps; x >= 0 {
		first = x/fs + 1
	}
	return first, last
}

func (f *file) readWAL(tls *libc.TLS, buf uintptr, n int, off int64) int32 {
	rc := f.uread(tls, buf, n, off)
	if rc != sqlite3.SQLITE_OK && rc != sqlite3.SQLITE_IOERR_SHORT_READ {
		return rc
	}
	ps := int64(f.v.pageSize)
	end := off + int64(n)
	out := mem(buf, n)
	first, last := f.walFrames(off, end)
	for i := first; i <= last; i++ {
		p := f.walPage(i)
		if p >= off && p+ps <= end {
			if prc := f.openPage(tls, out[p-off:p-off+ps], sqlite3.SQLITE_OK, kindWAL, p, 0); prc != sqlite3.SQLITE_OK {
				return prc
			}
			continue
		}
		prc := f.uread(tls, f.scratch, int(ps), p)
		if prc != sqlite3.SQLITE_OK && prc != sqlite3.SQLITE_IOERR_SHORT_READ {
			return prc
		}
		b := mem(f.scratch, int(ps))
		if prc := f.openPage(tls, b, sqlite3.SQLITE_OK, kindWAL, p, 0); prc != sqlite3.SQLITE_OK {
			return prc
		}
		lo, hi := max(p, off), min(p+ps, end)
		copy(out[lo-off:hi-off], b[lo-p:hi-p])
	}
	return rc
}

func (f *file) writeWAL(tls *libc.TLS, buf uintptr, n int, off int64) int32 {
	ps := f.v.pageSize
	end := off + int64(n)
	first, last := f.walFrames(off, end)
	if first > last {
		return f.uwrite(tls, buf, n, off) // headers only
	}
	if first != last || n != ps || f.walPage(first) != off {
		return sqlite3.SQLITE_IOERR_WRITE // never a part of a page
	}
	k, rc := f.main.keyForWrite(tls)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	if !isZero(mem(buf, ps)[ps-Reserve:]) {
		// Its checksum would not survive the round trip (see open): fail
		// the commit rather than lose it to the next recovery.
		f.v.fail(ErrReserveUsed, "a page in its WAL")
		return sqlite3.SQLITE_IOERR_WRITE
	}
	k.seal(mem(f.scratch, ps), mem(buf, ps), 0, kindWAL, off)
	return f.uwrite(tls, f.scratch, ps, off)
}
