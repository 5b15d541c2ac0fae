package main

import (
	"flag"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/localdb/validate"
)

// validateAs is the --validate-as flag of the commands that write to a
// local store: with it, the store's validate_doc_update functions run on
// every write of the command (a pull's included) as that user, as
// CouchDB runs them; without it none runs, as in PouchDB.
type validateAs struct {
	userCtx string
	wc      *validate.WriteContext
}

func validateAsFlag(fs *flag.FlagSet) *validateAs {
	v := &validateAs{}
	fs.StringVar(&v.userCtx, "validate-as", "", "run the store's validate_doc_update functions on the writes, as this user:\n`USERCTX` is CouchDB's userCtx, {\"name\": ..., \"roles\": [...]} (default: none runs, as in PouchDB)")
	return v
}

// check reads the flag's user, before anything is opened.
func (v *validateAs) check() error {
	if v.userCtx == "" {
		return nil
	}
	wc, err := validate.ParseUserCtx([]byte(v.userCtx))
	if err != nil {
		return usageErrorf("--validate-as: %v", err)
	}
	v.wc = wc
	return nil
}

// on turns validation on for db when the flag was given; off turns it
// off and frees the functions' runtimes.
func (v *validateAs) on(db *localdb.DB) (off func()) {
	if v.wc == nil {
		return func() {}
	}
	val := validate.New(nil)
	db.SetWriteCheck(val.WriteCheck(v.wc))
	return func() {
		db.SetWriteCheck(nil)
		val.Close()
	}
}

// withStore is withStore with the flag's validation on for fn's writes.
func (v *validateAs) withStore(path string, create bool, ks *keySource, fn func(db *localdb.DB) error) error {
	return withStore(path, create, ks, func(db *localdb.DB) error {
		defer v.on(db)()
		return fn(db)
	})
}
