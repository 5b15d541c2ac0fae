package sync

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/settee/settee/couchdoc"
)

// The sentinel errors of the replicator, to match with errors.Is.
var (
	// ErrNoPeer is returned when Options lack a source or a target.
	ErrNoPeer = errors.New("sync: source and target are required")
	// ErrNoDirection is returned for a Direction other than Push, Pull, Both.
	ErrNoDirection = errors.New("sync: direction must be push, pull or both")
	// ErrStarted is returned by Start on a Replicator that was started before.
	ErrStarted = errors.New("sync: replicator already started")
	// ErrNoBulkGet: the peer has no _bulk_get (over HTTP, it answered the
	// request with 400, 404, 405 or 501).
	ErrNoBulkGet = errors.New("sync: the peer has no _bulk_get")
	// ErrFixedCredentials is WaitCredentials' answer for a peer whose
	// credentials cannot change (a user and password given once).
	ErrFixedCredentials = errors.New("sync: the peer's credentials cannot change")
	// ErrLazyUnsupported: a lazy pull needs a source that reads attachment
	// stubs (StubReader) and a target that records missing bodies
	// (LazyWriter), and, with LazyOver, a source that serves single
	// attachments (AttachmentGetter).
	ErrLazyUnsupported = errors.New("sync: lazy attachments need a StubReader source and a LazyWriter target")
	// ErrSharedIdentity is the Err of an EventSharedIdentity.
	ErrSharedIdentity = errors.New("sync: another store with the same UUID wrote this replication's checkpoint " +
		"(a store file copied by hand?): nothing is lost, but the copies redo each other's work; copy stores with localdb.Clone")
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
	return fmt.Sprintf("%s %s: %s", e.Role, e.Peer, e.Detail())
}

// Detail is Error without the role and the peer, for a caller that names
// the peer itself: the URL is said once. An Err that names the peer too
// (one with a WithoutPeer method, as the HTTP client's errors have) is
// said without it.
func (e *PeerError) Detail() string {
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
	cause := e.Err.Error()
	if np, ok := e.Err.(interface{ WithoutPeer() string }); ok {
		cause = np.WithoutPeer()
	}
	return fmt.Sprintf("%s: %s%s", e.Op, cause, hint)
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
