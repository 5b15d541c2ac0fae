package sync

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/settee/settee/couchdoc"
)

// PeerError is an error of one peer, naming its role ("source" or "target")
// and the peer (Peer.String(), which holds no credentials).
type PeerError struct {
	Role string
	Peer string
	// Op is what the replicator was doing ("check", "read checkpoint", ...).
	Op  string
	Err error
}

// Error explains the failure, with a hint for the usual HTTP statuses.
func (e *PeerError) Error() string {
	hint := ""
	var ce *couchdoc.Error
	if errors.As(e.Err, &ce) {
		switch ce.Status {
		case http.StatusUnauthorized:
			hint = " (wrong or missing credentials)"
		case http.StatusForbidden:
			hint = " (the credentials lack the permission)"
		case http.StatusNotFound:
			if e.Op == "check" {
				hint = " (the database does not exist)"
			}
		}
	}
	return fmt.Sprintf("%s %s: %s: %v%s", e.Role, e.Peer, e.Op, e.Err, hint)
}

// Unwrap returns the peer's error.
func (e *PeerError) Unwrap() error { return e.Err }

func peerErr(role string, p Peer, op string, err error) error {
	if err == nil {
		return nil
	}
	var pe *PeerError
	if errors.As(err, &pe) {
		return err
	}
	return &PeerError{Role: role, Peer: p.String(), Op: op, Err: err}
}
