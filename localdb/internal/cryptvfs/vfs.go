// Package cryptvfs is a SQLite VFS that encrypts and authenticates every
// byte of a store that SQLite writes: the database file, its WAL and its
// rollback journal page by page (AES-256-GCM, a fresh nonce per page
// write, the page's place as associated data), and temporary files with a
// key of their own that lives only as long as the file. It wraps SQLite's
// default VFS, which keeps doing the I/O, locking and shared memory.
//
// Each New registers a VFS for one key under a fresh name, which a DSN
// names with vfs=NAME; Close unregisters it. A store must be made by
// Create, which gives its pages the Reserve bytes the VFS needs.
package cryptvfs

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrInUse is returned by Close while a file is open through the VFS.
var ErrInUse = errors.New("cryptvfs: the VFS has open files")

// VFS is one registered encrypting VFS, for one key.
type VFS struct {
	name     string
	key      []byte // the master key, a copy; cleared by Close
	pageSize int
	cvfs     uintptr // our sqlite3_vfs
	cname    uintptr
	under    uintptr // the default VFS
	handle   uintptr

	open atomic.Int32 // files open through the VFS

	mu      sync.Mutex
	mains   map[uintptr]*file  // open database files by their name's address
	pending map[string][8]byte // salts of files to be made (UseSalt)
	closed  bool

	failure atomic.Pointer[Failure] // the last failed authentication
}

// Failure describes a read that failed authentication.
type Failure struct {
	// Err is ErrWrongKey, ErrPlain or ErrNotOurs for the header, or the
	// AEAD's error for a page.
	Err error
	// What names the file and the place: "page 3", "WAL frame at 4160".
	What string
}

var (
	regMu   sync.Mutex
	handles sync.Map // uintptr -> *VFS or *file
	nextH   atomic.Uintptr
)

func addHandle(o any) uintptr {
	h := nextH.Add(1)
	handles.Store(h, o)
	return h
}

// ptr turns an address SQLite gave us into a pointer.
func ptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }

// fileHdr is the size of our part of each sqlite3_file: its method table
// pointer and our file's handle. The default VFS's file follows it.
const fileHdr = 16

// New registers a VFS that encrypts with key (32 bytes) pages of
// pageSize bytes. The key is copied and never written anywhere.
func New(key []byte, pageSize int) (*VFS, error) {
	if len(key) != keySize {
		return nil, fmt.Errorf("cryptvfs: the key is %d bytes, want %d", len(key), keySize)
	}
	if pageSize < 512 || pageSize > 65536 || pageSize&(pageSize-1) != 0 {
		return nil, fmt.Errorf("cryptvfs: bad page size %d", pageSize)
	}
	regMu.Lock()
	defer regMu.Unlock()
	tls := libc.NewTLS()
	defer tls.Close()
	under := sqlite3.Xsqlite3_vfs_find(tls, 0)
	if under == 0 {
		return nil, errors.New("cryptvfs: no default VFS")
	}
	v := &VFS{key: append([]byte(nil), key...), pageSize: pageSize, under: under, mains: map[uintptr]*file{}, pending: map[string][8]byte{}}
	v.handle = addHandle(v)
	v.name = fmt.Sprintf("settee-crypt-%d", v.handle)
	var err error
	if v.cname, err = libc.CString(v.name); err != nil {
		handles.Delete(v.handle)
		return nil, err
	}
	u := (*sqlite3.Tsqlite3_vfs)(ptr(under))
	v.cvfs = libc.Xcalloc(tls, 1, sqlite3.Tsize_t(unsafe.Sizeof(sqlite3.Tsqlite3_vfs{})))
	if v.cvfs == 0 {
		libc.Xfree(tls, v.cname)
		handles.Delete(v.handle)
		return nil, errors.New("cryptvfs: out of memory")
	}
	c := (*sqlite3.Tsqlite3_vfs)(ptr(v.cvfs))
	*c = *u
	// Version 2: no system-call overrides, which would reach the default
	// VFS's table through ours.
	c.FiVersion = 2
	c.FszOsFile = (fileHdr + u.FszOsFile + 7) &^ 7
	c.FpNext = 0
	c.FzName = v.cname
	c.FpAppData = v.handle
	c.FxSetSystemCall, c.FxGetSystemCall, c.FxNextSystemCall = 0, 0, 0
	// The default VFS's other methods take no state from the sqlite3_vfs
	// they are given, so they serve as they are; xOpen is ours.
	*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&c.FxOpen)) = xOpen
	if rc := sqlite3.Xsqlite3_vfs_register(tls, v.cvfs, 0); rc != sqlite3.SQLITE_OK {
		libc.Xfree(tls, v.cvfs)
		libc.Xfree(tls, v.cname)
		handles.Delete(v.handle)
		return nil, fmt.Errorf("cryptvfs: register: code %d", rc)
	}
	return v, nil
}

// UseSalt makes the file at path (as SQLite will name it: an absolute
// path), when it is made through v from now on, take salt instead of a
// random one: a key stretched from a passphrase with that salt can then
// be found again from the file's header. nil forgets it.
func (v *VFS) UseSalt(path string, salt []byte) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if salt == nil {
		delete(v.pending, path)
		return nil
	}
	if len(salt) != saltSize {
		return fmt.Errorf("cryptvfs: the salt is %d bytes, want %d", len(salt), saltSize)
	}
	v.pending[path] = [8]byte(salt)
	return nil
}

// Salt returns the salt in a store header (a file's first HeaderSize
// bytes), or ErrPlain, ErrNotOurs.
func Salt(h []byte) ([]byte, error) {
	salt, _, err := parseHeader(h)
	if err != nil {
		return nil, err
	}
	return salt[:], nil
}

// Name is the name to give as vfs= in a DSN.
func (v *VFS) Name() string { return v.name }

// PageSize is the page size of the stores the VFS reads and writes.
func (v *VFS) PageSize() int { return v.pageSize }

// Failure returns the last read that failed authentication, or nil.
func (v *VFS) Failure() *Failure { return v.failure.Load() }

func (v *VFS) fail(err error, what string) {
	v.failure.Store(&Failure{Err: err, What: what})
}

// Close unregisters the VFS and forgets its key. Every database opened
// through it must be closed first: while a file is open it returns
// ErrInUse and does nothing.
func (v *VFS) Close() error {
	regMu.Lock()
	defer regMu.Unlock()
	if v.closed {
		return nil
	}
	if n := v.open.Load(); n != 0 {
		return fmt.Errorf("%w: %s has %d", ErrInUse, v.name, n)
	}
	v.closed = true
	tls := libc.NewTLS()
	defer tls.Close()
	rc := sqlite3.Xsqlite3_vfs_unregister(tls, v.cvfs)
	libc.Xfree(tls, v.cvfs)
	libc.Xfree(tls, v.cname)
	handles.Delete(v.handle)
	clear(v.key)
	if rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("cryptvfs: unregister: code %d", rc)
	}
	return nil
}

func vfsOf(pVfs uintptr) *VFS {
	o, _ := handles.Load((*sqlite3.Tsqlite3_vfs)(ptr(pVfs)).FpAppData)
	return o.(*VFS)
}

// call helpers: SQLite's method pointers are Go func values (ccgo).
func fnp[F any](p uintptr) F { return *(*F)(unsafe.Pointer(&struct{ uintptr }{p})) }

// DefaultName is the name of SQLite's default VFS ("unix" on Linux and
// Darwin): what a plain file opened from a connection that reads through
// a VFS of this package must name.
func DefaultName() string {
	tls := libc.NewTLS()
	defer tls.Close()
	return libc.GoString((*sqlite3.Tsqlite3_vfs)(ptr(sqlite3.Xsqlite3_vfs_find(tls, 0))).FzName)
}
