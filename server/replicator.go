package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
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
	cfg := scheduler.Config{Database: ReplicatorDB, Logger: s.log, MaxJobs: s.cfg.MaxJobs, RetryDelay: s.cfg.ReplicationRetryDelay}
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
	db, err := d.s.dbs.get(ctx, ReplicatorDB)
	if err != nil {
		return err
	}
	doc, err := db.Get(ctx, id, localdb.GetOptions{})
	if err != nil {
		return err
	}
	if doc.Rev != rev || doc.Deleted {
		return nil // changed since: the scheduler reads the new revision
	}
	body := doc.Body
	for _, f := range []struct {
		k string
		v any
	}{{"_replication_state", "completed"}, {"_replication_state_time", time.Now().UTC().Format(time.RFC3339)}, {"_replication_stats", stats}} {
		v, _ := json.Marshal(f.v)
		body = setMember(body, f.k, v)
	}
	doc.Body = body
	_, err = db.Put(ctx, doc)
	if errors.Is(err, couchdoc.ErrConflict) {
		return nil
	}
	return err
}

// setMember returns a JSON object with key set to the JSON value v.
func setMember(obj json.RawMessage, key string, v json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	if _, ok := m[key]; ok {
		m[key] = v
		b, _ := json.Marshal(m)
		return b
	}
	k, _ := json.Marshal(key)
	t := bytes.TrimSpace(obj)
	if len(t) < 2 || bytes.Equal(bytes.TrimSpace(t[1:len(t)-1]), nil) {
		return json.RawMessage("{" + string(k) + ":" + string(v) + "}")
	}
	out := append([]byte{}, t[:len(t)-1]...)
	out = append(out, ',')
	out = append(out, k...)
	out = append(out, ':')
	out = append(out, v...)
	return append(out, '}')
}

// checkReplicatorDoc applies _replicator's rules to a document write: the
// body must be a replication CouchDB 3.5 takes (ParseSpec's refusals),
// and it belongs to its writer ("owner"): a user may not write one of
// another user's, as CouchDB's _replicator validation. A replicated
// revision (new_edits=false) is checked but kept as it came: its id is a
// hash of its body.
func (s *Server) checkReplicatorDoc(doc *couchdoc.Doc, u access.UserCtx, newEdits bool) error {
	if doc.Deleted || bytes.HasPrefix([]byte(doc.ID), []byte(couchdoc.DesignPrefix)) {
		return nil
	}
	body, err := doc.ValidBody()
	if err != nil {
		return err
	}
	sp, err := scheduler.ParseSpec(body)
	if err != nil {
		return err
	}
	switch {
	case sp.Owner == "" && u.Name != "" && newEdits:
		v, _ := json.Marshal(u.Name)
		doc.Body = setMember(body, "owner", v)
	case sp.Owner != "" && sp.Owner != u.Name && !u.IsServerAdmin():
		return couchdoc.Errorf(couchdoc.ErrForbidden, "Can't update replication documents from other users.")
	}
	return nil
}

// hideReplicationCredentials strips the credentials of a _replicator
// document read by a user who is neither a server admin nor its owner,
// as CouchDB does.
func (s *Server) hideReplicationCredentials(r *http.Request, doc *couchdoc.Doc) {
	c := callOf(r)
	if c == nil || c.rt.db != ReplicatorDB || c.auth.User.IsServerAdmin() {
		return
	}
	var owner struct {
		Owner string `json:"owner"`
	}
	if json.Unmarshal(doc.Body, &owner) == nil && owner.Owner != "" && owner.Owner == c.auth.User.Name {
		return
	}
	doc.Body = scheduler.StripCredentials(doc.Body)
}
