package mobile

import (
	"context"

	"github.com/settee/settee/localdb"
)

// Databases opens, checks and deletes stores. It holds nothing: make one
// where needed (Kotlin `Databases()`, Swift `MobileDatabases()`). Its
// methods are the package functions Open, OpenShared, OpenCopy,
// DeleteDatabase and Exists as methods, because Swift makes a method that can fail throw,
// while it sees a package function as taking an NSError pointer.
type Databases struct{}

// Open is the package's Open: it opens (or creates) the store at path.
func (*Databases) Open(path string) (d *Database, err error) {
	return Open(path)
}

// OpenShared is the package's OpenShared: a store another process also
// writes.
func (*Databases) OpenShared(path string) (d *Database, err error) {
	return OpenShared(path)
}

// OpenEncrypted is the package's OpenEncrypted: a store encrypted at rest
// with key (32 bytes from the Keystore or Keychain).
func (*Databases) OpenEncrypted(path string, key []byte, shared bool) (d *Database, err error) {
	return OpenEncrypted(path, key, shared)
}

// OpenCopy is the package's OpenCopy: a store of its own at path, made
// from a prebuilt seed store.
func (*Databases) OpenCopy(seedPath, path string) (d *Database, err error) {
	return OpenCopy(seedPath, path)
}

// Delete is DeleteDatabase.
func (*Databases) Delete(path string) (err error) {
	return DeleteDatabase(path)
}

// Exists is the package's Exists.
func (*Databases) Exists(path string) bool {
	return Exists(path)
}

// DeleteDatabase deletes the store at path with the files SQLite keeps
// beside it (-wal, -shm, -journal). It refuses, changing nothing, a store
// open in this process (CodeDatabaseOpen: Close every Database of it
// first), a missing one (CodeNotFound) and a file that is not a Settee
// store (CodeNotAStore). Another process using the file is not seen.
func DeleteDatabase(path string) (err error) {
	defer recoverTo(&err)
	return localdb.Remove(context.Background(), path)
}

// Exists reports whether path holds a Settee store; a missing or empty
// file, another program's file or one that cannot be read does not.
func Exists(path string) (ok bool) {
	defer recoverLog("Exists")
	ok, err := localdb.Exists(context.Background(), path)
	return ok && err == nil
}

// NewReplicator is the package's NewReplicator for this Database: a
// stopped replicator between it and the remote database of config.
func (d *Database) NewReplicator(config *ReplicatorConfig) (r *Replicator, err error) {
	return NewReplicator(d, config)
}
