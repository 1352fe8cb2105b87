// Package server wires Hangar together: it opens the catalog and the store
// named by the configuration, recovers interrupted uploads, and serves the
// APIs on their listeners with logging and health checks around them.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"hangar/internal/api/glance"
	"hangar/internal/auth"
	"hangar/internal/catalog"
	"hangar/internal/catalog/sqlite"
	"hangar/internal/storage"
	"hangar/internal/storage/localfs"
)

// Config is everything `hangar serve` needs.
type Config struct {
	DataDir      string
	Listen       string
	Auth         string // "none" or "tokens"
	TokensFile   string
	MaxImageSize int64
	Log          *slog.Logger
}

// Validate reports a config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.DataDir == "":
		return errors.New("a data directory is required")
	case c.Listen == "":
		return errors.New("a listen address is required")
	case c.Auth != "none" && c.Auth != "tokens":
		return fmt.Errorf("--auth must be none or tokens, not %q", c.Auth)
	case c.Auth == "tokens" && c.TokensFile == "":
		return errors.New("--auth tokens needs --tokens FILE")
	case c.Auth == "none" && c.TokensFile != "":
		return errors.New("--tokens is only used with --auth tokens")
	}
	return nil
}

// Server is a running Hangar.
type Server struct {
	cfg   Config
	cat   catalog.Catalog
	store storage.Store
	api   *glance.API
	http  *http.Server
	ln    net.Listener
}

// New opens the data directory and recovers it; it does not listen yet.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	authn, err := authenticator(cfg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, err
	}
	cat, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(cfg.DataDir, "catalog.db")})
	if err != nil {
		return nil, err
	}
	store, err := localfs.New(ctx, localfs.Config{Root: filepath.Join(cfg.DataDir, "store")})
	if err != nil {
		cat.Close()
		return nil, err
	}
	api := glance.New(cat, store, authn, cfg.Log, glance.Config{MaxImageSize: cfg.MaxImageSize})
	n, err := api.Recover(ctx)
	if err != nil {
		cat.Close()
		return nil, err
	}
	if n > 0 {
		cfg.Log.Info("recovered interrupted uploads", "images", n)
	}
	s := &Server{cfg: cfg, cat: cat, store: store, api: api}
	s.http = &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(cfg.Log.Handler(), slog.LevelWarn),
	}
	return s, nil
}

func authenticator(cfg Config) (auth.Authenticator, error) {
	if cfg.Auth == "tokens" {
		return auth.LoadTokens(cfg.TokensFile)
	}
	return auth.None{}, nil
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok\n"))
	})
	mux.Handle("/", s.api.Handler())
	return accessLog(s.cfg.Log, mux)
}

// Listen binds the configured address.
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return err
	}
	s.ln = ln
	return nil
}

// Addr is the bound address (useful with port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve answers requests until ctx ends, then drains and closes everything.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(s.ln) }()
	s.cfg.Log.Info("serving", "listen", s.Addr(), "data", s.cfg.DataDir, "auth", s.cfg.Auth)
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = s.http.Shutdown(sctx)
	}
	s.api.Close()
	if cerr := s.cat.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
