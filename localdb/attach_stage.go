package localdb

import (
	"context"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb/internal/attachstore"
)

// Streamed attachment bodies are staged (attachstore.Stage says how and
// why) under temporary keys that Compact leaves alone while the upload is
// in flight (db.staging); unstage drops what no content kept.

// stage streams the Body of every attachment of docs into the store.
func (db *DB) stage(ctx context.Context, docs []*couchdoc.Doc) (map[*couchdoc.Attachment]*attachstore.Staged, error) {
	var staged map[*couchdoc.Attachment]*attachstore.Staged
	for _, d := range docs {
		if d == nil {
			continue
		}
		for _, a := range d.Attachments {
			if a == nil || a.Stub || a.Body == nil {
				continue
			}
			if staged == nil {
				staged = make(map[*couchdoc.Attachment]*attachstore.Staged)
			}
			s, err := db.stageOne(ctx, a)
			if s != nil {
				staged[a] = s
			}
			if err != nil {
				db.unstage(ctx, staged)
				return nil, err
			}
		}
	}
	return staged, nil
}

// stageOne stages a's Body under a new temporary key.
func (db *DB) stageOne(ctx context.Context, a *couchdoc.Attachment) (*attachstore.Staged, error) {
	s := &attachstore.Staged{Key: "tmp-" + newUUID()}
	db.smu.Lock()
	db.staging[s.Key] = true // Compact leaves these chunks alone
	db.smu.Unlock()
	err := attachstore.Stage(a, s, func(fn func(attachstore.Tx) error) error {
		return db.update(ctx, func(w *wtx) error { return fn(w) })
	})
	return s, err
}

// unstage deletes whatever is still stored under the staged keys, except
// the chunks that content kept.
func (db *DB) unstage(ctx context.Context, staged map[*couchdoc.Attachment]*attachstore.Staged) {
	if len(staged) == 0 {
		return
	}
	// Best effort even when ctx is done; Compact removes leftovers.
	db.update(context.WithoutCancel(ctx), func(w *wtx) error {
		for _, s := range staged {
			if _, err := w.Exec(qDeleteChunks, s.Key); err != nil {
				return err
			}
		}
		return nil
	})
	db.smu.Lock()
	for _, s := range staged {
		delete(db.staging, s.Key)
	}
	db.smu.Unlock()
}

// stagingKeys lists the temporary keys of the uploads in flight.
func (db *DB) stagingKeys() []any {
	db.smu.Lock()
	defer db.smu.Unlock()
	keys := make([]any, 0, len(db.staging))
	for k := range db.staging {
		keys = append(keys, k)
	}
	return keys
}
