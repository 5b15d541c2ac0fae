package server

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/server/access"
	"github.com/settee/settee/server/scheduler"
)

// Version is what GET / reports as the CouchDB version.
const Version = "3.3.3-settee"

// Config configures a Server. Exactly one of DataDir and DBPath is set.
type Config struct {
	// Addr is the listening address of ListenAndServe; default
	// "127.0.0.1:5984". A non-loopback address needs Users.
	Addr string

	// DataDir holds one SQLite file per database, named after the database
	// ("a/b" is stored as "a%2Fb.db"; NAME.sqlite files are served too).
	// Databases are created and deleted with PUT and DELETE /{db}.
	DataDir string
	// DBPath serves a single database from one SQLite file under the name
	// DBName (default "settee"); it can be neither created nor deleted
	// over HTTP. The file is created on first use if missing, unless
	// DBOptions.NoCreate.
	DBPath string
	DBName string
	// DBOptions are passed to localdb.Open. Their NoCreate applies to the
	// stores found on disk; PUT /{db} in a DataDir always creates one.
	DBOptions *localdb.Options

	// Users maps the server admins' names to their passwords. When empty,
	// every request is served as the admin ("admin party"), which
	// ListenAndServe only allows on a loopback address. Other users are
	// documents of the _users database, which a DataDir server has once
	// it has an admin.
	Users map[string]string
	// DefaultSecurityEveryone gives new databases (and stores that never
	// had a _security object) an empty security object, open to every
	// user, instead of CouchDB 3's admin_only default.
	DefaultSecurityEveryone bool
	// PasswordIterations are the PBKDF2 rounds of a new password hash in
	// _users; default access.DefaultIterations, as CouchDB 3.5.
	PasswordIterations int
	// JWT, when it holds keys, accepts "Authorization: Bearer" tokens
	// signed with them.
	JWT *access.JWTKeys
	// PerUser creates the database userdb-HEX(name) for every new user,
	// with that user as its only admin and member (CouchDB's
	// couch_peruser); PerUserDelete deletes it with the user.
	PerUser, PerUserDelete bool
	// LockoutThreshold is how many failed logins of one user from one
	// address within five minutes lock that pair out (CouchDB's
	// chttpd_auth_lockout); 0 means 5, a negative value turns it off.
	LockoutThreshold int
	// SessionSecret signs AuthSession cookies; random (per process) when
	// empty, which logs everyone out on restart.
	SessionSecret []byte
	// SessionTimeout is the lifetime of a session cookie; default 10 min.
	SessionTimeout time.Duration

	// MaxJobs bounds the replications of _replicator running at once; the
	// others wait, pending (CouchDB's [replicator] max_jobs). Default 500.
	MaxJobs int
	// ReplicationRetryDelay is the wait before a crashed replication job
	// starts again, doubled at each crash in a row (up to 10 min).
	// Default 5 s.
	ReplicationRetryDelay time.Duration
	// ReplicationInterval is how often, when more jobs wait than MaxJobs
	// lets run, up to 20 running continuous jobs make way for pending
	// ones (CouchDB's [replicator] interval and max_churn). Default 60 s.
	ReplicationInterval time.Duration

	// CORS enables CORS headers; nil disables them.
	CORS *CORS

	// MaxBodySize bounds request bodies (attachments included); larger
	// ones are refused with 413 too_large. Default 64 MiB.
	MaxBodySize int64

	// TLSCertFile and TLSKeyFile make ListenAndServe serve HTTPS.
	TLSCertFile, TLSKeyFile string

	// UUID is the server's uuid reported by GET /; default: the database's
	// UUID in single-database mode, else one made on first use and kept
	// in DataDir/server.uuid.
	UUID string

	// Logger receives errors and one line per request (never credentials);
	// nil discards.
	Logger *slog.Logger
}

// CORS configures cross-origin requests as CouchDB's [cors] section does
// (with [chttpd] enable_cors = true), under the same names.
type CORS struct {
	// Origins are the allowed origins, matched exactly ("https://app.example"),
	// or "*" for any: [cors] origins.
	Origins []string
	// Credentials allows cookies and Authorization on CORS requests:
	// [cors] credentials.
	Credentials bool
	// Methods a preflight may ask for: [cors] methods; default CouchDB's
	// (CONNECT, COPY, DELETE, GET, HEAD, OPTIONS, POST, PUT, TRACE).
	Methods []string
	// Headers a preflight may ask for: [cors] headers; default CouchDB's
	// list (accept, authorization, content-type, if-match, origin, ...).
	Headers []string
	// MaxAge of preflight answers: [cors] max_age; default 600 s.
	MaxAge time.Duration
}

// Server is the CouchDB API over local databases. It is an http.Handler.
type Server struct {
	cfg    Config
	log    *slog.Logger
	dbs    *registry
	secret []byte
	uuid   string
	start  string

	auth *access.Authenticator
	// secCache holds the security object of each open *localdb.DB;
	// userCache the users read from _users (userKey: cachedUser).
	secCache, userCache sync.Map

	// sched runs _replicator's jobs (nil in single-database mode); it
	// starts once, on Open, Serve or the first request, and stops on Close.
	sched     *scheduler.Scheduler
	schedOnce sync.Once
	resumed   int
	schedErr  error

	tlsCert  *tls.Certificate // loaded by Open
	uuidOnce sync.Once
	randUUID string
}

// ErrConfig reports an unusable Config.
var ErrConfig = errors.New("server: invalid config")

// New validates cfg and returns a Server. It does no I/O: databases are
// opened on first use. Close the Server to close them.
func New(cfg Config) (*Server, error) {
	if (cfg.DataDir == "") == (cfg.DBPath == "") {
		return nil, errorf("exactly one of DataDir and DBPath must be set")
	}
	if cfg.DBPath != "" {
		if cfg.DBName == "" {
			cfg.DBName = "settee"
		}
		if err := validateDBName(cfg.DBName); err != nil {
			return nil, errorf("DBName: %v", err)
		}
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:5984"
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = access.DefaultSessionTimeout
	}
	if cfg.PasswordIterations <= 0 {
		cfg.PasswordIterations = access.DefaultIterations
	}
	if cfg.MaxBodySize <= 0 {
		cfg.MaxBodySize = 64 << 20
	}
	if cfg.CORS != nil && len(cfg.CORS.Origins) == 0 {
		return nil, errorf("CORS needs at least one origin (or \"*\")")
	}
	if (cfg.TLSCertFile == "") != (cfg.TLSKeyFile == "") {
		return nil, errorf("TLS needs both TLSCertFile and TLSKeyFile")
	}
	for name := range cfg.Users {
		if name == "" {
			return nil, errorf("empty user name")
		}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{
		cfg:   cfg,
		log:   log,
		dbs:   newRegistry(cfg),
		start: "0",
	}
	s.secret = cfg.SessionSecret
	if len(s.secret) == 0 {
		s.secret = make([]byte, 32)
		_, _ = rand.Read(s.secret)
	}
	s.uuid = cfg.UUID
	s.auth = &access.Authenticator{
		Admins:   cfg.Users,
		Sessions: access.Sessions{Secret: s.secret, Timeout: cfg.SessionTimeout},
		JWT:      cfg.JWT,
		Verifier: access.NewVerifier(0),
	}
	if cfg.LockoutThreshold >= 0 {
		s.auth.Lockout = &access.Lockout{Threshold: cfg.LockoutThreshold}
	}
	if cfg.DataDir != "" && len(cfg.Users) > 0 {
		s.auth.Users = usersSource{s}
	}
	s.sched = s.newScheduler()
	return s, nil
}

func errorf(format string, args ...any) error {
	return errors.Join(ErrConfig, errorString(format, args...))
}

func (s *Server) now() time.Time { return s.auth.Clock() }

func (s *Server) sessions() access.Sessions { return s.auth.Sessions }

// Close stops the replication jobs (each records its checkpoint) and
// closes the databases the server opened. Requests still running get
// errors.
func (s *Server) Close() error {
	var err error
	if s.sched != nil {
		err = s.sched.Close()
	}
	return errors.Join(err, s.dbs.closeAll())
}

// serverUUID is GET /'s uuid.
func (s *Server) serverUUID(r *http.Request) string {
	if s.uuid != "" {
		return s.uuid
	}
	if s.cfg.DBPath != "" {
		if db, err := s.dbs.get(r.Context(), s.cfg.DBName); err == nil {
			return db.UUID()
		}
	}
	s.uuidOnce.Do(func() { s.randUUID = s.dataDirUUID() })
	return s.randUUID
}

// newUUID returns 32 random hex digits, CouchDB's uuid form.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// dataDirUUID reads DataDir/server.uuid, creating it on first use; if the
// directory is not writable the uuid lasts for the process only.
func (s *Server) dataDirUUID() string {
	file := filepath.Join(s.cfg.DataDir, "server.uuid")
	if b, err := os.ReadFile(file); err == nil {
		if id := strings.TrimSpace(string(b)); len(id) == 32 {
			return id
		}
	}
	id := newUUID()
	if err := os.MkdirAll(s.cfg.DataDir, 0o700); err == nil {
		if err := os.WriteFile(file, []byte(id+"\n"), 0o600); err != nil {
			s.log.Warn("cannot keep the server uuid", "err", err)
		}
	}
	return id
}
