package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/settee/settee/localdb"
	"github.com/settee/settee/server"
)

var serveHelp = cmdHelp{
	usage: "settee serve [flags] DIR|LOCAL.db",
	about: `Serve local stores over CouchDB's HTTP API, so CouchDB, PouchDB or another
Settee can replicate with them.

Given a directory, every DBNAME.db (or DBNAME.sqlite) file in it is a
database, and databases can be created over HTTP (PUT /DBNAME makes
DBNAME.db). Given a file, that one store is served as the database named by
--name (default: the file name without its extension); --create makes it
if it does not exist. Every store is opened and checked, and the TLS files
loaded, before the server says it serves.

Without --user the server accepts anyone as admin, so it only listens on a
loopback address; with --user (password from --password-file or
$SETTEE_PASSWORD) it requires that user's credentials and may listen on any
address. --tls-cert and --tls-key serve HTTPS. Ctrl-C stops it.

A directory served with --user is a hub for a team, as CouchDB: that user
is the server admin, who adds users to the _users database (PUT
/_users/org.couchdb.user:NAME) and says in each database's _security who
may read and write it. New databases are admin-only (--default-security
everyone opens them to every user); --peruser gives each new user a
database of their own. Users sign in with basic auth, a session cookie
(POST /_session) or a bearer token (--jwt-secret-file, --jwt-key).

For web apps on another origin, --cors-origins turns on CORS as CouchDB's
[cors] section does (--cors-credentials, --cors-methods, --cors-headers and
--cors-max-age are its other settings); PouchDB in a browser needs
--cors-credentials.`,
	examples: `  settee serve notes.db                        # http://127.0.0.1:5984/notes
  settee serve --addr 127.0.0.1:6984 ./data     # one database per DATA/NAME.db
  settee serve --create new.db                  # an empty store, made now
  SETTEE_PASSWORD=secret settee serve --addr 0.0.0.0:5984 --user admin \
      --tls-cert cert.pem --tls-key key.pem notes.db
  settee sync phone.db http://127.0.0.1:5984/notes  # from another shell
  settee serve --cors-origins http://localhost:8080 --cors-credentials ./data
  settee serve --user admin --password-file pw.txt --peruser ./hub`,
	exits: storeExits,
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fset := flagSet("serve")
	addr := fset.String("addr", "127.0.0.1:5984", "listen on this `host:port`")
	name := fset.String("name", "", "the database `name` of a single served file (default: its base name)")
	user := fset.String("user", "", "require this user `name` (password from --password-file or $SETTEE_PASSWORD)")
	pwFile := fset.String("password-file", "", "read the user's password from this `file`")
	cert := fset.String("tls-cert", "", "serve HTTPS with this certificate `file` (PEM)")
	key := fset.String("tls-key", "", "the private key `file` of --tls-cert (PEM)")
	verbose := fset.Bool("verbose", false, "log one line per request to stderr")
	create := fset.Bool("create", false, "create the served store file if it does not exist")
	corsOrigins := fset.String("cors-origins", "", "allow cross-origin requests from these `origins` (comma-separated, or *), as CouchDB's [cors] origins")
	corsCreds := fset.Bool("cors-credentials", false, "allow cookies and Authorization on cross-origin requests ([cors] credentials)")
	corsMethods := fset.String("cors-methods", "", "the `methods` a cross-origin request may use ([cors] methods; default CouchDB's)")
	corsHeaders := fset.String("cors-headers", "", "the request `headers` a cross-origin request may send ([cors] headers; default CouchDB's)")
	ks := keyFlag(fset)
	corsMaxAge := fset.Int("cors-max-age", 600, "how long browsers may cache a preflight answer, in `seconds` ([cors] max_age)")
	hub := addHubFlags(fset)
	pos, err := parseFlags(fset, serveHelp, args, 1, 1, stdout)
	if err != nil {
		return err
	}
	if _, port, err := net.SplitHostPort(*addr); err != nil {
		return usageErrorf("--addr %q is not host:port", *addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return usageErrorf("--addr %q: port %s is not between 0 and 65535", *addr, port)
	}
	cfg := server.Config{Addr: *addr, TLSCertFile: *cert, TLSKeyFile: *key,
		DBOptions: &localdb.Options{NoCreate: !*create}}
	if cfg.CORS, err = corsConfig(fset, *corsOrigins, *corsCreds, *corsMethods, *corsHeaders, *corsMaxAge); err != nil {
		return err
	}
	path := pos[0]
	if ks.path() != "" {
		// One key for every store served (a served store stays encrypted
		// on disk). A passphrase is stretched with the salt of a single
		// store's header; a folder of stores needs a raw key.
		kp := path
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			kp = ""
		}
		k, salt, err := ks.options(kp)
		if err != nil {
			return err
		}
		if salt != nil && kp == "" {
			return usageErrorf("serve DIR takes a key file of 64 hex digits, not a passphrase: each store's passphrase key depends on its own salt")
		}
		cfg.DBOptions.Key, cfg.DBOptions.KeySalt = k, salt
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		cfg.DataDir = path
	case err == nil || errors.Is(err, fs.ErrNotExist) && filepath.Ext(path) != "":
		cfg.DBPath = path
		cfg.DBName = *name
		if cfg.DBName == "" {
			cfg.DBName = dbNameOf(path)
		}
	case errors.Is(err, fs.ErrNotExist):
		return &exitError{code: exitNotFound, msg: fmt.Sprintf("%s does not exist: give a directory of stores (mkdir it first) or a store file such as %s.db", path, path)}
	default:
		return err
	}
	if *user != "" {
		pwd, ok := os.LookupEnv("SETTEE_PASSWORD")
		if *pwFile != "" {
			if pwd, err = readPassword(*pwFile); err != nil {
				return err
			}
			ok = true
		}
		if !ok || pwd == "" {
			return usageErrorf("--user %s needs a password: --password-file or $SETTEE_PASSWORD", *user)
		}
		addSecret(pwd)
		cfg.Users = map[string]string{*user: pwd}
	} else if *pwFile != "" {
		return usageErrorf("--password-file needs --user")
	}
	if err := hub.apply(&cfg); err != nil {
		return err
	}
	level := slog.LevelWarn // errors and warnings only
	if *verbose {
		level = slog.LevelDebug // one line per request
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	srv, err := server.New(cfg)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error(), err: err}
	}
	defer srv.Close()
	names, err := srv.Open(ctx)
	if err != nil {
		if errors.Is(err, localdb.ErrNoStore) {
			return &exitError{code: exitNotFound, msg: fmt.Sprintf("no local store at %s (--create makes an empty one)", path), err: err}
		}
		if errors.Is(err, server.ErrTLS) {
			return &exitError{code: exitUsage, msg: err.Error() + " (check --tls-cert and --tls-key)", err: err}
		}
		if errors.Is(err, fs.ErrNotExist) {
			return &exitError{code: exitNotFound, err: err}
		}
		return err
	}
	l, err := srv.Listen()
	if err != nil {
		if errors.Is(err, server.ErrInsecure) {
			return usageErrorf("refusing to serve on %s without --user: anyone could read and write (use a loopback address such as 127.0.0.1, or --user)", *addr)
		}
		if errors.Is(err, syscall.EADDRINUSE) {
			return &exitError{code: exitFailure, err: err, msg: fmt.Sprintf(
				"%s is in use: another server (a CouchDB, or another settee serve) listens there; choose a free address with --addr%s", *addr, freeAddrHint(*addr))}
		}
		return &exitError{code: exitFailure, msg: err.Error(), err: err}
	}
	scheme := "http"
	if *cert != "" {
		scheme = "https"
	}
	where := fmt.Sprintf("%s://%s/", scheme, l.Addr())
	if cfg.DBPath != "" {
		where += cfg.DBName
	}
	if cfg.DataDir != "" {
		found := "no databases (*.db, *.sqlite) yet: PUT " + where + "NAME creates one"
		if len(names) > 0 {
			found = fmt.Sprintf("%d database(s): %s", len(names), strings.Join(names, ", "))
		}
		if note := hubNote(cfg); note != "" {
			found += "; " + note
		}
		fmt.Fprintf(stdout, "settee: %s has %s\n", path, found)
		for _, n := range srv.FileNotes() {
			fmt.Fprintf(stdout, "settee: %s\n", n)
		}
		if n := srv.ResumedReplications(); n > 0 {
			fmt.Fprintf(stdout, "settee: resumed %d replication(s) of _replicator\n", n)
		}
	}
	fmt.Fprintf(stdout, "settee: serving %s at %s (settee %s; Ctrl-C to stop)\n", path, where, version)
	err = srv.Serve(ctx, l)
	if err == nil && ctx.Err() != nil {
		fmt.Fprintln(stdout, "settee: stopped")
	}
	return err
}

// corsConfig is the server's CORS from the --cors-* flags: nil without
// --cors-origins, whose companions then make no sense.
func corsConfig(fset *flag.FlagSet, origins string, creds bool, methods, headers string, maxAge int) (*server.CORS, error) {
	if origins == "" {
		var stray string
		fset.Visit(func(f *flag.Flag) {
			if strings.HasPrefix(f.Name, "cors-") {
				stray = f.Name
			}
		})
		if stray != "" {
			return nil, usageErrorf("--%s needs --cors-origins", stray)
		}
		return nil, nil
	}
	if maxAge <= 0 {
		return nil, usageErrorf("--cors-max-age %d is not a positive number of seconds", maxAge)
	}
	return &server.CORS{Origins: corsList(origins), Credentials: creds, Methods: corsList(methods),
		Headers: corsList(headers), MaxAge: time.Duration(maxAge) * time.Second}, nil
}

// corsList splits a comma-separated setting as CouchDB's [cors] does.
func corsList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// freeAddrHint suggests an address near addr that is free now: the next
// ports of its host, tried by listening on them; "" if none is.
func freeAddrHint(addr string) string {
	host, p, err := net.SplitHostPort(addr)
	port, perr := strconv.Atoi(p)
	if err != nil || perr != nil {
		return ""
	}
	for next := port + 1; next <= port+100 && next < 1<<16; next++ {
		try := net.JoinHostPort(host, strconv.Itoa(next))
		if l, err := net.Listen("tcp", try); err == nil {
			l.Close()
			return ", such as --addr " + try
		}
	}
	return ""
}

// dbNameOf makes a CouchDB database name from a file name, as a
// directory's files are named (server.NameOfFile).
func dbNameOf(path string) string { return server.NameOfFile(path) }
