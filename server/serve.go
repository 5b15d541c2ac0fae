package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/settee/settee/localdb"
)

// ErrTLS: the TLS certificate or key cannot be loaded.
var ErrTLS = errors.New("TLS certificate")

// ErrInsecure refuses to serve an admin party beyond the loopback address.
var ErrInsecure = errors.New("server: refusing to listen on a non-loopback address without users")

// Listen opens the listener of cfg.Addr after the safety checks of
// ListenAndServe. It is split out so callers (and tests) can learn the
// port of ":0" before serving.
func (s *Server) Listen() (net.Listener, error) {
	if err := s.checkAddr(s.cfg.Addr); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("server: listen: %w", err)
	}
	return l, nil
}

// checkAddr refuses non-loopback addresses when no users are configured.
func (s *Server) checkAddr(addr string) error {
	if len(s.cfg.Users) > 0 {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("server: bad address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w (address %q)", ErrInsecure, addr)
	}
	return nil
}

// ListenAndServe listens on cfg.Addr (127.0.0.1:5984 by default) and serves
// until ctx is cancelled, then shuts down gracefully: new connections are
// refused, continuous and longpoll feeds end (request contexts derive from
// ctx) and requests in flight get up to 10 s to finish. It serves HTTPS
// when TLS files are configured. It returns nil after a shutdown caused by
// ctx, or the error that stopped it.
func (s *Server) ListenAndServe(ctx context.Context) error {
	l, err := s.Listen()
	if err != nil {
		return err
	}
	return s.Serve(ctx, l)
}

// Serve serves on l until ctx is cancelled (see ListenAndServe). It closes l.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	if err := s.checkAddr(l.Addr().String()); err != nil {
		l.Close()
		return err
	}
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          nil,
	}
	if _, err := s.startScheduler(ctx); err != nil {
		l.Close()
		return err
	}
	errc := make(chan error, 1)
	go func() {
		if s.tlsCert != nil {
			hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*s.tlsCert}}
			errc <- hs.ServeTLS(l, "", "")
		} else if s.cfg.TLSCertFile != "" {
			errc <- hs.ServeTLS(l, s.cfg.TLSCertFile, s.cfg.TLSKeyFile)
		} else {
			errc <- hs.Serve(l)
		}
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := hs.Shutdown(sctx)
	<-errc
	if err != nil {
		hs.Close()
		return fmt.Errorf("server: shutdown: %w", err)
	}
	return nil
}

// Run builds a Server from cfg, serves until ctx is cancelled, then closes
// the databases.
func Run(ctx context.Context, cfg Config) error {
	s, err := New(cfg)
	if err != nil {
		return err
	}
	err = s.ListenAndServe(ctx)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

// Open opens now what the server would open on first use (the single
// database, or every database file of DataDir) and loads the TLS
// certificate, so that a setup that cannot work fails before anything
// says it serves. It returns the names of the databases.
func (s *Server) Open(ctx context.Context) ([]string, error) {
	if s.cfg.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(s.cfg.TLSCertFile, s.cfg.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrTLS, err)
		}
		s.tlsCert = &cert
	}
	if s.cfg.DataDir != "" {
		st, err := os.Stat(s.cfg.DataDir)
		if err != nil {
			return nil, fmt.Errorf("data directory: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("data directory %s is not a directory", s.cfg.DataDir)
		}
	}
	names, err := s.dbs.names()
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if _, err := s.dbs.get(ctx, name); err != nil {
			if s.cfg.DBPath != "" {
				var oe *localdb.OpenError
				if errors.As(err, &oe) {
					return nil, oe // the path is in it; no need for the name
				}
			}
			return nil, err
		}
	}
	if _, err := s.startScheduler(ctx); err != nil {
		return nil, err
	}
	return names, nil
}
