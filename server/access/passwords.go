package access

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/hex"
	"hash"
	gosync "sync"
	"sync/atomic"
)

// DefaultIterations is CouchDB 3.5's [chttpd_auth] iterations: PBKDF2
// rounds of a new password hash.
const DefaultIterations = 600000

// Hash is a stored password: CouchDB's password_scheme "pbkdf2" fields of
// a user document.
type Hash struct {
	PRF        string // pbkdf2_prf: "sha256" (default), "sha", "sha224", "sha384", "sha512"
	Iterations int
	Salt       string // as stored; its bytes are the PBKDF2 salt
	DerivedKey string // hex
}

func prf(name string) (func() hash.Hash, int, bool) {
	switch name {
	case "sha256", "":
		return sha256.New, sha256.Size, true
	case "sha", "sha1":
		return sha1.New, sha1.Size, true
	case "sha224":
		return sha256.New224, sha256.Size224, true
	case "sha384":
		return sha512.New384, sha512.Size384, true
	case "sha512":
		return sha512.New, sha512.Size, true
	}
	return nil, 0, false
}

// HashPassword derives a new hash of password with a fresh random salt,
// as CouchDB's couch_users_db:save_doc (PBKDF2-SHA256).
func HashPassword(password string, iterations int) Hash {
	var b [16]byte
	_, _ = rand.Read(b[:])
	salt := hex.EncodeToString(b[:])
	dk, _ := pbkdf2.Key(sha256.New, password, []byte(salt), iterations, sha256.Size)
	return Hash{PRF: "sha256", Iterations: iterations, Salt: salt, DerivedKey: hex.EncodeToString(dk)}
}

// verify runs PBKDF2: the slow check.
func (h Hash) verify(password string) bool {
	newHash, size, ok := prf(h.PRF)
	if !ok || h.Iterations < 1 || h.Salt == "" || h.DerivedKey == "" {
		return false
	}
	want, err := hex.DecodeString(h.DerivedKey)
	if err != nil || len(want) != size {
		return false
	}
	got, err := pbkdf2.Key(newHash, password, []byte(h.Salt), h.Iterations, size)
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}

// Verifier checks passwords against stored hashes and remembers the ones
// it verified, as CouchDB's couch_passwords_cache, so that a client
// sending the same credentials with every request costs one PBKDF2 run,
// not one per request. The cache holds keyed digests, never a password:
// a changed salt or derived key (a password change) misses it.
type Verifier struct {
	key [32]byte
	mu  gosync.Mutex
	ok  map[string]struct{}
	max int
	// slow counts the PBKDF2 runs, for tests.
	slow atomic.Int64
}

// NewVerifier returns a Verifier remembering up to max verified
// credentials (CouchDB's cache is bounded too); max <= 0 means 10,000.
func NewVerifier(max int) *Verifier {
	if max <= 0 {
		max = 10000
	}
	v := &Verifier{ok: map[string]struct{}{}, max: max}
	_, _ = rand.Read(v.key[:])
	return v
}

func (v *Verifier) digest(name, password string, h Hash) string {
	m := hmac.New(sha256.New, v.key[:])
	for _, s := range []string{name, h.PRF, h.Salt, h.DerivedKey, password} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return string(m.Sum(nil))
}

// Verify reports whether password matches h for user name.
func (v *Verifier) Verify(name, password string, h Hash) bool {
	d := v.digest(name, password, h)
	v.mu.Lock()
	_, hit := v.ok[d]
	v.mu.Unlock()
	if hit {
		return true
	}
	v.slow.Add(1)
	if !h.verify(password) {
		return false
	}
	v.mu.Lock()
	if len(v.ok) >= v.max {
		for k := range v.ok { // evict an arbitrary entry
			delete(v.ok, k)
			break
		}
	}
	v.ok[d] = struct{}{}
	v.mu.Unlock()
	return true
}
