package cryptvfs

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"strconv"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The kinds of file the VFS opens.
const (
	fileDB      = iota // the database: pages sealed in place
	fileWAL            // its WAL: headers in the clear, page images sealed
	fileJournal        // its rollback journal: the same
	fileTemp           // anything else: AES-CTR with a key of its own
	filePlain          // a super-journal: file names only
)

// file is the Go side of one open file.
type file struct {
	v     *VFS
	kind  int
	under uintptr // the default VFS's sqlite3_file
	um    *sqlite3.Tsqlite3_io_methods
	name  uintptr // fileDB: its name's address, the key of VFS.mains
	main  *file   // fileWAL, fileJournal: the database they belong to
	key   *pageKey
	salt  *[saltSize]byte // fileDB: the salt to make it with (VFS.UseSalt)

	scratch uintptr // C memory, cap bytes
	cap     int
	ctr     cipher.Block // fileTemp
}

var ioMethods uintptr // our sqlite3_io_methods, in C memory

func init() {
	tls := libc.NewTLS()
	defer tls.Close()
	ioMethods = libc.Xcalloc(tls, 1, sqlite3.Tsize_t(unsafe.Sizeof(sqlite3.Tsqlite3_io_methods{})))
	m := (*sqlite3.Tsqlite3_io_methods)(ptr(ioMethods))
	// Version 2: shared memory for WAL, but no memory-mapped reads, which
	// would bypass decryption.
	m.FiVersion = 2
	*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&m.FxClose)) = xClose
	*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&m.FxRead)) = xRead
	*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&m.FxWrite)) = xWrite
	*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&m.FxTruncate)) = xTruncate
	*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&m.FxSync)) = xSync
	*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&m.FxFileSize)) = xFileSize
	*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&m.FxLock)) = xLock
	*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&m.FxUnlock)) = xUnlock
	*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&m.FxCheckReservedLock)) = xCheckReservedLock
	*(*func(*libc.TLS, uintptr, int32, uintptr) int32)(unsafe.Pointer(&m.FxFileControl)) = xFileControl
	*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&m.FxSectorSize)) = xSectorSize
	*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&m.FxDeviceCharacteristics)) = xDeviceCharacteristics
	*(*func(*libc.TLS, uintptr, int32, int32, int32, uintptr) int32)(unsafe.Pointer(&m.FxShmMap)) = xShmMap
	*(*func(*libc.TLS, uintptr, int32, int32, int32) int32)(unsafe.Pointer(&m.FxShmLock)) = xShmLock
	*(*func(*libc.TLS, uintptr))(unsafe.Pointer(&m.FxShmBarrier)) = xShmBarrier
	*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&m.FxShmUnmap)) = xShmUnmap
}

func xOpen(tls *libc.TLS, pVfs, zName, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	v := vfsOf(pVfs)
	base := (*sqlite3.Tsqlite3_file)(ptr(pFile))
	base.FpMethods = 0
	under := pFile + fileHdr
	uv := (*sqlite3.Tsqlite3_vfs)(ptr(v.under))
	if rc := fnp[func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32](uv.FxOpen)(tls, v.under, zName, under, flags, pOutFlags); rc != sqlite3.SQLITE_OK {
		return rc
	}
	um := (*sqlite3.Tsqlite3_file)(ptr(under)).FpMethods
	f := &file{v: v, under: under, um: (*sqlite3.Tsqlite3_io_methods)(ptr(um))}
	fail := func(rc int32) int32 {
		if um != 0 {
			fnp[func(*libc.TLS, uintptr) int32](f.um.FxClose)(tls, under)
		}
		return rc
	}
	switch {
	case flags&sqlite3.SQLITE_OPEN_MAIN_DB != 0:
		f.kind = fileDB
		f.name = zName
		v.mu.Lock()
		if s, ok := v.pending[libc.GoString(zName)]; ok {
			f.salt = &s
		}
		v.mu.Unlock()
	case flags&(sqlite3.SQLITE_OPEN_WAL|sqlite3.SQLITE_OPEN_MAIN_JOURNAL) != 0:
		f.kind = fileWAL
		if flags&sqlite3.SQLITE_OPEN_MAIN_JOURNAL != 0 {
			f.kind = fileJournal
		}
		db := sqlite3.Xsqlite3_filename_database(tls, zName)
		v.mu.Lock()
		f.main = v.mains[db]
		v.mu.Unlock()
		if f.main == nil {
			return fail(sqlite3.SQLITE_CANTOPEN)
		}
	case flags&sqlite3.SQLITE_OPEN_SUPER_JOURNAL != 0:
		f.kind = filePlain
	default:
		f.kind = fileTemp
		var k [32]byte
		rand.Read(k[:])
		f.ctr, _ = aes.NewCipher(k[:])
	}
	if !f.grow(tls, v.pageSize) {
		return fail(sqlite3.SQLITE_NOMEM)
	}
	h := addHandle(f)
	*(*uintptr)(ptr(pFile + 8)) = h
	if f.kind == fileDB {
		v.mu.Lock()
		v.mains[zName] = f
		v.mu.Unlock()
	}
	v.open.Add(1)
	base.FpMethods = ioMethods
	return sqlite3.SQLITE_OK
}

func fileOf(pFile uintptr) *file {
	o, _ := handles.Load(*(*uintptr)(ptr(pFile + 8)))
	return o.(*file)
}

// grow makes the scratch buffer at least n bytes.
func (f *file) grow(tls *libc.TLS, n int) bool {
	if n <= f.cap {
		return true
	}
	p := libc.Xmalloc(tls, sqlite3.Tsize_t(n))
	if p == 0 {
		return false
	}
	if f.scratch != 0 {
		libc.Xfree(tls, f.scratch)
	}
	f.scratch, f.cap = p, n
	return true
}

func mem(p uintptr, n int) []byte { return unsafe.Slice((*byte)(ptr(p)), n) }

func xClose(tls *libc.TLS, pFile uintptr) int32 {
	f := fileOf(pFile)
	rc := fnp[func(*libc.TLS, uintptr) int32](f.um.FxClose)(tls, f.under)
	if f.kind == fileDB {
		f.v.mu.Lock()
		if f.v.mains[f.name] == f {
			delete(f.v.mains, f.name)
		}
		f.v.mu.Unlock()
	}
	libc.Xfree(tls, f.scratch)
	handles.Delete(*(*uintptr)(ptr(pFile + 8)))
	f.v.open.Add(-1)
	return rc
}

func (f *file) uread(tls *libc.TLS, buf uintptr, n int, off int64) int32 {
	return fnp[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](f.um.FxRead)(tls, f.under, buf, int32(n), off)
}

func (f *file) uwrite(tls *libc.TLS, buf uintptr, n int, off int64) int32 {
	return fnp[func(*libc.TLS, uintptr, uintptr, int32, int64) int32](f.um.FxWrite)(tls, f.under, buf, int32(n), off)
}

func xRead(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	f := fileOf(pFile)
	switch f.kind {
	case fileDB:
		return f.readDB(tls, zBuf, int(iAmt), iOfst)
	case fileWAL:
		return f.readWAL(tls, zBuf, int(iAmt), iOfst)
	case fileJournal:
		rc := f.uread(tls, zBuf, int(iAmt), iOfst)
		if (rc == sqlite3.SQLITE_OK || rc == sqlite3.SQLITE_IOERR_SHORT_READ) && f.journalPage(int(iAmt), iOfst) {
			return f.openPage(tls, mem(zBuf, int(iAmt)), rc, kindJournal, iOfst, 0)
		}
		return rc
	case fileTemp:
		rc := f.uread(tls, zBuf, int(iAmt), iOfst)
		f.xorCTR(mem(zBuf, int(iAmt)), iOfst)
		return rc
	}
	return f.uread(tls, zBuf, int(iAmt), iOfst)
}

func xWrite(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	f := fileOf(pFile)
	n := int(iAmt)
	switch f.kind {
	case fileDB:
		return f.writeDB(tls, zBuf, n, iOfst)
	case fileWAL:
		return f.writeWAL(tls, zBuf, n, iOfst)
	case fileJournal:
		if f.journalPage(n, iOfst) {
			k, rc := f.main.keyForWrite(tls)
			if rc != sqlite3.SQLITE_OK {
				return rc
			}
			k.seal(mem(f.scratch, n), mem(zBuf, n), 0, kindJournal, iOfst)
			return f.uwrite(tls, f.scratch, n, iOfst)
		}
	case fileTemp:
		if !f.grow(tls, n) {
			return sqlite3.SQLITE_IOERR_NOMEM
		}
		b := mem(f.scratch, n)
		copy(b, mem(zBuf, n))
		f.xorCTR(b, iOfst)
		return f.uwrite(tls, f.scratch, n, iOfst)
	}
	return f.uwrite(tls, zBuf, n, iOfst)
}

// journalPage reports whether a journal read or write is of a page
// image: a rollback journal's records are a 4-byte page number, the page,
// a 4-byte checksum, after a header of a sector's size, so a page starts 4
// bytes past a multiple of 8 while every header starts on a sector.
func (f *file) journalPage(n int, off int64) bool {
	return n == f.v.pageSize && off%8 == 4
}

// xorCTR applies the temporary file's keystream at offset off.
func (f *file) xorCTR(b []byte, off int64) {
	var iv [16]byte
	binary.BigEndian.PutUint64(iv[8:], uint64(off/16))
	s := cipher.NewCTR(f.ctr, iv[:])
	if skip := int(off % 16); skip > 0 {
		var pad [16]byte
		s.XORKeyStream(pad[:skip], pad[:skip])
	}
	s.XORKeyStream(b, b)
}

// openPage decrypts a page image read into b (rc is the read's result)
// with the database's key, at the place (kind, pos). start is where the
// sealed part begins.
func (f *file) openPage(tls *libc.TLS, b []byte, rc int32, kind byte, pos int64, start int) int32 {
	if isZero(b) {
		return rc // never written: past the end, or a size hint's zeros
	}
	db := f
	if f.main != nil {
		db = f.main
	}
	k, krc := db.keyForRead(tls)
	if krc != sqlite3.SQLITE_OK {
		return krc
	}
	if err := k.open(b, start, kind, pos); err != nil {
		f.v.fail(err, describe(kind, pos, len(b)))
		return sqlite3.SQLITE_IOERR_DATA
	}
	return sqlite3.SQLITE_OK
}

func describe(kind byte, pos int64, ps int) string {
	switch kind {
	case kindWAL:
		return "a page in its WAL"
	case kindJournal:
		return "a page in its rollback journal"
	}
	return "page " + strconv.FormatInt(pos, 10)
}
