package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/settee/settee/localdb"
)

// keyEnv names the key file when --key-file is not given.
const keyEnv = "SETTEE_KEY_FILE"

// keySource is where a command finds the key of an encrypted store:
// --key-file, else $SETTEE_KEY_FILE; none for a plain store.
type keySource struct{ file string }

// keyFlag gives a command that opens a store its --key-file flag.
func keyFlag(fs *flag.FlagSet) *keySource {
	k := &keySource{}
	fs.StringVar(&k.file, "key-file", "", "the key of an encrypted store: a file holding 64 hex digits (a 32-byte key)\nor a passphrase (default $"+keyEnv+")")
	return k
}

func (k *keySource) path() string {
	if k != nil && k.file != "" {
		return k.file
	}
	return os.Getenv(keyEnv)
}

// options returns the key of the store at store and, for a new store made
// with a passphrase, the salt of its header; nil, nil without a key file.
func (k *keySource) options(store string) (key, salt []byte, err error) {
	p := k.path()
	if p == "" {
		return nil, nil, nil
	}
	return readKeyFile(p, store, false)
}

// Argon2id's cost for a passphrase: RFC 9106's second recommended
// setting (64 MiB, 3 passes), with 4 lanes.
const (
	kdfTime    = 3
	kdfMemory  = 64 << 10 // KiB
	kdfThreads = 4
)

// readKeyFile reads a key file: 64 hex digits are the key; anything else
// is a passphrase, stretched with Argon2id and the salt in store's header
// (a new random salt when store does not exist yet, or fresh: a store
// about to be written; returned for its header).
func readKeyFile(p, store string, fresh bool) (key, salt []byte, err error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, &exitError{code: exitUsage, msg: fmt.Sprintf("key file: %v", err), err: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4097))
	if err != nil {
		return nil, nil, fmt.Errorf("key file %s: %w", p, err)
	}
	defer clear(b)
	if len(b) > 4096 {
		return nil, nil, usageErrorf("key file %s: longer than 4096 bytes", p)
	}
	if t := strings.TrimSpace(string(b)); len(t) == 2*localdb.KeySize {
		if key, err := hex.DecodeString(t); err == nil {
			return key, nil, nil
		}
	}
	pass := []byte(strings.TrimRight(string(b), "\r\n"))
	if len(pass) == 0 {
		return nil, nil, usageErrorf("key file %s is empty: it holds 64 hex digits or a passphrase", p)
	}
	if !fresh {
		if salt, err = localdb.StoreSalt(store); err != nil {
			return nil, nil, err
		}
		fresh = salt == nil
	}
	if fresh {
		salt = make([]byte, 8)
		if _, err := rand.Read(salt); err != nil {
			return nil, nil, err
		}
	}
	key = argon2.IDKey(pass, salt, kdfTime, kdfMemory, kdfThreads, localdb.KeySize)
	clear(pass)
	if !fresh {
		salt = nil
	}
	return key, salt, nil
}

// isKeyError reports the errors of a missing, wrong or needless key.
func isKeyError(err error) bool {
	return errors.Is(err, localdb.ErrWrongKey) || errors.Is(err, localdb.ErrNeedKey) || errors.Is(err, localdb.ErrPlainStore)
}
