package main

import (
	"context"
	"io"

	"github.com/settee/settee/localdb"
)

var encryptHelp = cmdHelp{
	usage: "settee encrypt [--key-file FILE] PLAIN.db ENC.db",
	about: `Write an encrypted copy of a local store: every page of ENC.db, of its WAL
and journals is then sealed with the key (AES-256-GCM), and the file shows
no SQLite header and no plaintext. The key file (--key-file, else
$SETTEE_KEY_FILE) holds 64 hex digits (a 32-byte key), or a passphrase,
stretched with Argon2id and a salt kept in ENC.db's header. PLAIN.db is left
as it is (it may be in use); ENC.db must not exist and appears whole or not
at all. Every command then opens ENC.db with the same --key-file. Prints
{"path","encrypted"}.`,
	examples: `  head -c 32 /dev/urandom | xxd -p -c 64 > notes.key
  settee encrypt --key-file notes.key notes.db notes-enc.db
  SETTEE_KEY_FILE=notes.key settee info notes-enc.db`,
	exits: storeExits,
}

var decryptHelp = cmdHelp{
	usage: "settee decrypt [--key-file FILE] ENC.db PLAIN.db",
	about: `Write a plain copy of an encrypted local store (its key from --key-file or
$SETTEE_KEY_FILE). PLAIN.db must not exist and appears whole or not at all.
Prints {"path","encrypted"}.`,
	examples: `  settee decrypt --key-file notes.key notes-enc.db notes.db`,
	exits:    storeExits,
}

var rekeyHelp = cmdHelp{
	usage: "settee rekey [--key-file FILE] LOCAL.db NEW_KEY_FILE",
	about: `Encrypt a local store with the key in NEW_KEY_FILE instead of its key
(--key-file or $SETTEE_KEY_FILE). The store must not be open elsewhere. The
new copy is written beside it, synced and renamed over it: a crash at any
moment leaves the old store or the new one, whole. Prints
{"path","encrypted"}.`,
	examples: `  settee rekey --key-file old.key notes.db new.key`,
	exits:    storeExits,
}

// cryptReport is what encrypt, decrypt and rekey print.
type cryptReport struct {
	Path      string `json:"path"`
	Encrypted bool   `json:"encrypted"`
}

func runEncrypt(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runCrypt(ctx, "encrypt", encryptHelp, args, stdout)
}

func runDecrypt(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runCrypt(ctx, "decrypt", decryptHelp, args, stdout)
}

func runRekey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runCrypt(ctx, "rekey", rekeyHelp, args, stdout)
}

func runCrypt(ctx context.Context, name string, h cmdHelp, args []string, stdout io.Writer) error {
	fs := flagSet(name)
	ks := keyFlag(fs)
	out := outputFlags(fs, stdout)
	pos, err := parseFlags(fs, h, args, 2, 2, stdout)
	if err != nil {
		return err
	}
	if err := out.check(); err != nil {
		return err
	}
	if ks.path() == "" {
		return usageErrorf("%s needs a key: --key-file FILE or $%s", name, keyEnv)
	}
	src, dst := pos[0], pos[1]
	rep := cryptReport{Path: dst, Encrypted: name != "decrypt"}
	switch name {
	case "encrypt":
		key, salt, kerr := readKeyFile(ks.path(), dst, true)
		if kerr != nil {
			return kerr
		}
		err = localdb.Encrypt(ctx, src, dst, key, salt)
		clear(key)
	case "decrypt":
		key, _, kerr := ks.options(src)
		if kerr != nil {
			return kerr
		}
		err = localdb.Decrypt(ctx, src, dst, key)
		clear(key)
	case "rekey":
		rep.Path = src
		old, _, kerr := ks.options(src)
		if kerr != nil {
			return kerr
		}
		// A passphrase gets a new salt: the new key is stretched as for a
		// new store.
		key, salt, kerr := readKeyFile(dst, src, true)
		if kerr != nil {
			return kerr
		}
		err = localdb.Rekey(ctx, src, old, key, salt)
		clear(old)
		clear(key)
	}
	if err != nil {
		return err
	}
	return out.value(rep)
}
