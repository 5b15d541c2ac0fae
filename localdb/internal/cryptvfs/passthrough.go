package cryptvfs

import (
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The methods that move no content go straight to the default VFS's
// file, which follows our header in the sqlite3_file.

func under(pFile uintptr) (uintptr, *sqlite3.Tsqlite3_io_methods) {
	u := pFile + fileHdr
	return u, (*sqlite3.Tsqlite3_io_methods)(ptr((*sqlite3.Tsqlite3_file)(ptr(u)).FpMethods))
}

func xTruncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	u, m := under(pFile)
	return fnp[func(*libc.TLS, uintptr, int64) int32](m.FxTruncate)(tls, u, size)
}

func xSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	u, m := under(pFile)
	return fnp[func(*libc.TLS, uintptr, int32) int32](m.FxSync)(tls, u, flags)
}

func xFileSize(tls *libc.TLS, pFile, pSize uintptr) int32 {
	u, m := under(pFile)
	return fnp[func(*libc.TLS, uintptr, uintptr) int32](m.FxFileSize)(tls, u, pSize)
}

func xLock(tls *libc.TLS, pFile uintptr, lock int32) int32 {
	u, m := under(pFile)
	return fnp[func(*libc.TLS, uintptr, int32) int32](m.FxLock)(tls, u, lock)
}

func xUnlock(tls *libc.TLS, pFile uintptr, lock int32) int32 {
	u, m := under(pFile)
	return fnp[func(*libc.TLS, uintptr, int32) int32](m.FxUnlock)(tls, u, lock)
}

func xCheckReservedLock(tls *libc.TLS, pFile, pResOut uintptr) int32 {
	u, m := under(pFile)
	return fnp[func(*libc.TLS, uintptr, uintptr) int32](m.FxCheckReservedLock)(tls, u, pResOut)
}

func xFileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	u, m := under(pFile)
	return fnp[func(*libc.TLS, uintptr, int32, uintptr) int32](m.FxFileControl)(tls, u, op, pArg)
}

func xSectorSize(tls *libc.TLS, pFile uintptr) int32 {
	u, m := under(pFile)
	if m.FxSectorSize == 0 {
		return 4096
	}
	return fnp[func(*libc.TLS, uintptr) int32](m.FxSectorSize)(tls, u)
}

// atomicCaps are the device's promises of atomic writes, which would let
// SQLite skip the journal or write part of a page: not ours to keep.
const atomicCaps = sqlite3.SQLITE_IOCAP_ATOMIC | sqlite3.SQLITE_IOCAP_ATOMIC512 | sqlite3.SQLITE_IOCAP_ATOMIC1K |
	sqlite3.SQLITE_IOCAP_ATOMIC2K | sqlite3.SQLITE_IOCAP_ATOMIC4K | sqlite3.SQLITE_IOCAP_ATOMIC8K |
	sqlite3.SQLITE_IOCAP_ATOMIC16K | sqlite3.SQLITE_IOCAP_ATOMIC32K | sqlite3.SQLITE_IOCAP_ATOMIC64K |
	sqlite3.SQLITE_IOCAP_BATCH_ATOMIC | sqlite3.SQLITE_IOCAP_SUBPAGE_READ

// xDeviceCharacteristics also promises powersafe overwrite, so that
// SQLite never pads WAL frames to a sector by writing part of a page.
func xDeviceCharacteristics(tls *libc.TLS, pFile uintptr) int32 {
	u, m := under(pFile)
	c := int32(0)
	if m.FxDeviceCharacteristics != 0 {
		c = fnp[func(*libc.TLS, uintptr) int32](m.FxDeviceCharacteristics)(tls, u)
	}
	return c&^atomicCaps | sqlite3.SQLITE_IOCAP_POWERSAFE_OVERWRITE
}

func xShmMap(tls *libc.TLS, pFile uintptr, iPg, pgsz, bExtend int32, pp uintptr) int32 {
	u, m := under(pFile)
	if m.FiVersion < 2 || m.FxShmMap == 0 {
		return sqlite3.SQLITE_IOERR_SHMMAP
	}
	return fnp[func(*libc.TLS, uintptr, int32, int32, int32, uintptr) int32](m.FxShmMap)(tls, u, iPg, pgsz, bExtend, pp)
}

func xShmLock(tls *libc.TLS, pFile uintptr, offset, n, flags int32) int32 {
	u, m := under(pFile)
	return fnp[func(*libc.TLS, uintptr, int32, int32, int32) int32](m.FxShmLock)(tls, u, offset, n, flags)
}

func xShmBarrier(tls *libc.TLS, pFile uintptr) {
	u, m := under(pFile)
	fnp[func(*libc.TLS, uintptr)](m.FxShmBarrier)(tls, u)
}

func xShmUnmap(tls *libc.TLS, pFile uintptr, deleteFlag int32) int32 {
	u, m := under(pFile)
	return fnp[func(*libc.TLS, uintptr, int32) int32](m.FxShmUnmap)(tls, u, deleteFlag)
}
