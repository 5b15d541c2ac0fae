package couch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/settee/settee/sync"
)

var _ sync.Reauthorizer = (*DB)(nil)

// credentialsPoll is how often WaitCredentials asks the token provider for
// its token. The provider is asked before every request while replicating,
// so once a second while waiting is no extra burden.
const credentialsPoll = time.Second

// WaitCredentials waits until Options.TokenFunc hands out a token other
// than the one of the last request refused with 401 or 403, asking it
// once a second (errors of the provider are waited out), and returns nil;
// ctx's error when ctx is done. Other credentials (a user and password, a
// fixed BearerToken) cannot change: it returns sync.ErrFixedCredentials at
// once. It makes no request to the server.
func (db *DB) WaitCredentials(ctx context.Context) error {
	if db.opts.TokenFunc == nil {
		return sync.ErrFixedCredentials
	}
	t := time.NewTicker(credentialsPoll)
	defer t.Stop()
	for {
		if tok, err := db.opts.TokenFunc(ctx); err == nil {
			db.mu.Lock()
			refused := db.refused
			db.mu.Unlock()
			if credentialKey("Bearer "+tok) != refused {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// noteRefused remembers the credentials of a request the server refused
// (a digest: no copy of a secret is kept).
func (db *DB) noteRefused(req *http.Request) {
	key := req.Header.Get("Authorization")
	if db.opts.TokenFunc == nil && db.opts.BearerToken == "" {
		key = "user " + db.user + ":" + db.pass // basic auth or a session
	}
	db.mu.Lock()
	db.refused = credentialKey(key)
	db.mu.Unlock()
}

func credentialKey(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
