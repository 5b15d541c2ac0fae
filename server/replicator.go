package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/settee/settee/couchdoc"
	"github.com/settee/settee/localdb"
	"github.com/settee/settee/server/access"
	"github.com/settee/settee/server/scheduler"
)

// ReplicatorDB is the database of the replications the server keeps
// running by itself (CouchDB's _replicator).
const ReplicatorDB = "_replicator"

// newScheduler is the server's scheduler: it runs POST /_replicate's
// jobs and, on a DataDir server, the documents of _replicator.
func (s *Server) newScheduler() *scheduler.Scheduler {
	cfg := scheduler.Config{Database: ReplicatorDB, Logger: s.log, MaxJobs: s.cfg.MaxJobs, RetryDelay: s.cfg.ReplicationRetryDelay, Interval: s.cfg.ReplicationInterval}
	if s.cfg.DataDir != "" {
		cfg.Docs = replicatorDocs{s}
	}
	return scheduler.New(cfg)
}

// startScheduler starts the scheduler once (on Open, Serve or the first
// request), making _replicator on a server that keeps _users, as CouchDB
// does on its first start. It returns how many jobs it resumed.
func (s *Server) startScheduler(ctx context.Context) (int, error) {
	if s.sched == nil {
		return 0, nil
	}
	s.schedOnce.Do(func() {
		if s.hasUsersDB() {
			if _, err := s.openDB(ctx, ReplicatorDB); err != nil {
				s.log.Warn("create _replicator", "err", err)
			}
		}
		s.resumed, s.schedErr = s.sched.Start(ctx)
	})
	return s.resumed, s.schedErr
}

// ResumedReplications is how many replication jobs the server started
// from its _replicator documents when it opened.
func (s *Server) ResumedReplications() int {
	n, _ := s.startScheduler(context.Background())
	return n
}

// replicatorDocs reads _replicator for the scheduler.
type replicatorDocs struct{ s *Server }

// Changes reads _replicator's changes, from the start when the database
// is not the one of epoch.
func (d replicatorDocs) Changes(ctx context.Context, epoch string, since int64, fn func(id, rev string, deleted bool, body []byte) error) (string, int64, error) {
	db, err := d.s.dbs.get(ctx, ReplicatorDB)
	if errors.Is(err, errNoDB) {
		return "", 0, nil
	}
	if err != nil {
		return epoch, since, err
	}
	if db.UUID() != epoch {
		since = 0
	}
	seq, err := db.Changes(ctx, localdb.ChangesOptions{Since: since, IncludeDocs: true}, func(c *localdb.Change) error {
		if len(c.Revs) == 0 || couchdoc.IsLocalID(c.ID) || bytes.HasPrefix([]byte(c.ID), []byte(couchdoc.DesignPrefix)) {
			return nil
		}
		var body []byte
		if c.Doc != nil {
			body = c.Doc.Body
		}
		return fn(c.ID, c.Revs[0], c.Deleted, body)
	})
	if err != nil {
		return epoch, since, err
	}
	return db.UUID(), seq, nil
}

// Completed marks a one-shot's document as CouchDB does once it ends.
func (d replicatorDocs) Completed(ctx context.Context, id, rev string, stats json.RawMessage) error {
	return d.setState(ctx, id, rev, "completed", scheduler.Member{Key: "_replication_state_reason"}, scheduler.Member{Key: "_replication_stats", Value: stats})
}

// Failed marks a document that cannot run as CouchDB's update_failed.
func (d replicatorDocs) Failed(ctx context.Context, id, rev, reason string) error {
	r, _ := json.Marshal(reason)
	return d.setState(ctx, id, rev, "failed", scheduler.Member{Key: "_replication_stats"}, scheduler.Member{Key: "_replication_state_reason", Value: r})
}

// ClearState removes a document's state members as CouchDB's
// remove_state_fields.
func (d replicatorDocs) ClearState(ctx context.Context, id, rev string) error {
	return d.setState(ctx, id, rev, "", scheduler.Member{Key: "_replication_state_time"},
		scheduler.Member{Key: "_replication_state_reason"}, scheduler.Member{Key: "_replication_id"}, scheduler.Member{Key: "_replication_stats"})
}

// setState writes a terminal state into the document's revision rev as
// CouchDB's couch_replicator_docs:update_rep_doc: _replication_state,
// with _replication_state_time when the state changes (state "" removes
// it), and the other members given (a nil Value removes one). A document changed or deleted
// since is left alone (the scheduler reads its new revision), as is one
// that already says so.
func (d replicatorDocs) setState(ctx context.Context, id, rev, state string, more ...scheduler.Member) error {
	db, err := d.s.dbs.get(ctx, ReplicatorDB)
	if err != nil {
		return err
	}
	doc, err := db.Get(ctx, id, localdb.GetOptions{})
	if errors.Is(err, couchdoc.ErrNotFound) {
		return nil // deleted since
	}
	if err != nil {
		return err
	}
	if doc.Rev != rev || doc.Deleted {
		return nil
	}
	var cur struct {
		State string `json:"_replication_state"`
	}
	_ = json.Unmarshal(doc.Body, &cur)
	set := more
	switch {
	case state == "":
		set = append([]scheduler.Member{{Key: "_replication_state"}}, more...)
	case cur.State != state:
		st, _ := json.Marshal(state)
		now, _ := json.Marshal(time.Now().UTC().Format(time.RFC3339))
		set = append([]scheduler.Member{{Key: "_replication_state", Value: st}, {Key: "_replication_state_time", Value: now}}, more...)
	}
	body := scheduler.SetMembers(doc.Body, set...)
	if sameJSON(body, doc.Body) {
		return nil
	}
	doc.Body = body
	_, err = db.Put(ctx, doc)
	if errors.Is(err, couchdoc.ErrConflict) {
		return nil
	}
	return err
}

// checkReplicatorDoc applies _replicator's rules to a document write, as
// CouchDB's couch_replicator_docs:before_doc_update: the document belongs
// to its writer ("owner", set when missing, null for anonymous): a user
// who is not an admin (admin: server or database admin) may not write one
// of another user's, nor one of owner null; an admin's write with owner
// null becomes the admin's. The body must be a replication CouchDB 3.5
// takes (ParseSpec's refusals), unless it is in the failed state (as
// CouchDB, so that a failed document can be kept and edited). A
// replicated revision (new_edits=false) is checked but kept as it came:
// its id is a hash of its body.
func (s *Server) checkReplicatorDoc(doc *couchdoc.Doc, u access.UserCtx, admin, newEdits bool) error {
	if doc.Deleted || bytes.HasPrefix([]byte(doc.ID), []byte(couchdoc.DesignPrefix)) {
		return nil
	}
	body, err := doc.ValidBody()
	if err != nil {
		return err
	}
	var head struct {
		Owner json.RawMessage `json:"owner"`
		State json.RawMessage `json:"_replication_state"`
	}
	_ = json.Unmarshal(body, &head)
	var name json.RawMessage = []byte("null")
	if u.Name != "" {
		name, _ = json.Marshal(u.Name)
	}
	switch {
	case head.Owner == nil:
		if newEdits {
			body = scheduler.SetMembers(body, scheduler.Member{Key: "owner", Value: name})
		}
	case sameJSON(head.Owner, name):
	case admin && sameJSON(head.Owner, []byte("null")):
		if newEdits {
			body = scheduler.SetMembers(body, scheduler.Member{Key: "owner", Value: name})
		}
	case !admin:
		return couchdoc.Errorf(couchdoc.ErrForbidden, "Can't update replication documents from other users.")
	}
	if !sameJSON(head.State, []byte(`"failed"`)) {
		if _, err := scheduler.ParseSpec(body); err != nil {
			return err
		}
	}
	doc.Body = body
	return nil
}

// sameJSON reports whether two JSON values are equal.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return a != nil && b != nil && json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// replicatorView returns how a request may see _replicator's documents:
// nil (as stored) on other databases and for admins of _replicator (server
// or database admins, CouchDB's check_is_admin); for anyone else a
// function that shows the documents of other owners without their
// credentials (hideCredentials). Every path that returns a document's
// body applies it, as CouchDB's after_doc_read runs on every read.
func (s *Server) replicatorView(r *http.Request) func(*couchdoc.Doc) {
	c := callOf(r)
	if c == nil || c.rt.db != ReplicatorDB {
		return nil
	}
	u := c.auth.User
	if u.IsServerAdmin() || c.sec != nil && c.sec.IsAdmin(u) {
		return nil
	}
	return func(doc *couchdoc.Doc) { hideCredentials(doc, u.Name) }
}

// hideCredentials shows a replication document to the user name as
// CouchDB 3.5 does (couch_replicator_docs:after_doc_read): as stored to
// its owner (anonymous owns a document whose owner is null), otherwise
// without its endpoints' credentials and with a revision made up for the
// body shown, so that an edit made from it conflicts. A body with nothing
// to strip keeps its revision, as CouchDB's made-up revision of an
// unchanged body is the real one. Design and local documents are shown
// as stored.
func hideCredentials(doc *couchdoc.Doc, name string) {
	if doc == nil || strings.HasPrefix(doc.ID, couchdoc.DesignPrefix) || couchdoc.IsLocalID(doc.ID) {
		return
	}
	var m struct {
		Owner json.RawMessage `json:"owner"`
	}
	_ = json.Unmarshal(doc.Body, &m)
	if m.Owner != nil {
		var owner *string
		if json.Unmarshal(m.Owner, &owner) == nil && (owner == nil && name == "" || owner != nil && name != "" && *owner == name) {
			return
		}
	}
	stripped := scheduler.StripCredentials(doc.Body)
	if bytes.Equal(stripped, doc.Body) {
		return
	}
	doc.Body = stripped
	gen, _, err := couchdoc.ParseRev(doc.Rev)
	if err != nil {
		return
	}
	canon, err := couchdoc.CanonicalBody(stripped)
	if err != nil {
		canon = stripped
	}
	hash := couchdoc.NewRevHash(doc.Deleted, doc.Rev, canon, doc.Attachments)
	doc.Rev = couchdoc.FormatRev(gen, hash)
	if doc.Revisions != nil && len(doc.Revisions.IDs) > 0 {
		ids := append([]string{hash}, doc.Revisions.IDs[1:]...)
		doc.Revisions = &couchdoc.Revisions{Start: doc.Revisions.Start, IDs: ids}
	}
}

// viewDocs applies view (replicatorView) to each document.
func viewDocs(view func(*couchdoc.Doc), docs ...*couchdoc.Doc) {
	if view == nil {
		return
	}
	for _, d := range docs {
		view(d)
	}
}
