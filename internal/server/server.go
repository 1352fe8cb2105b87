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
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"hangar/internal/api/glance"
	"hangar/internal/api/imageio"
	"hangar/internal/auth"
	"hangar/internal/catalog"
	"hangar/internal/catalog/postgres"
	"hangar/internal/catalog/sqlite"
	"hangar/internal/storage"
	"hangar/internal/storage/localfs"
	"hangar/internal/storage/retry"
	"hangar/internal/storage/s3store"
	"hangar/internal/tcpcork"
	"hangar/internal/transfer"
)

// Config is everything `hangar serve` needs.
type Config struct {
	DataDir string
	// Catalog is a PostgreSQL DSN (postgres://… or host=… keywords) for a
	// catalog several servers share; empty: SQLite in DataDir.
	Catalog string
	// Store is file:///PATH for image files in PATH (a shared mount for
	// several servers), or s3://BUCKET/PREFIX?endpoint=URL (credentials
	// from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; transfers staged and
	// reads cached in DataDir/s3); empty: DataDir/store.
	Store string
	// CacheBytes bounds the S3 store's local read cache.
	CacheBytes   int64
	Listen       string
	Auth         string // "none" or "tokens"
	TokensFile   string
	MaxImageSize int64
	// ControlSocket serves imageio's ticket API; DataSocket serves the
	// transfer data path to local clients. Both default to files in
	// DataDir; the control API is never served on TCP.
	ControlSocket string
	DataSocket    string
	Transfer      transfer.Config
	Log           *slog.Logger
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
	cfg       Config
	cat       catalog.Catalog
	store     storage.Store
	transfers *transfer.Manager
	api       *glance.API
	imageio   *imageio.API
	servers   []*http.Server
	listeners []net.Listener
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
	cat, err := openCatalog(ctx, cfg)
	if err != nil {
		return nil, err
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		cat.Close()
		return nil, err
	}
	s, err := assemble(ctx, cfg, cat, store, authn)
	if err != nil {
		cat.Close()
		return nil, err
	}
	return s, nil
}

func openCatalog(ctx context.Context, cfg Config) (catalog.Catalog, error) {
	if cfg.Catalog == "" {
		return sqlite.New(ctx, sqlite.Config{Path: filepath.Join(cfg.DataDir, "catalog.db")})
	}
	return postgres.New(ctx, cfg.Catalog)
}

func openStore(ctx context.Context, cfg Config) (storage.Store, error) {
	root := filepath.Join(cfg.DataDir, "store")
	if strings.HasPrefix(cfg.Store, "s3://") {
		s, err := s3store.New(ctx, s3store.Config{URL: cfg.Store, LocalDir: filepath.Join(cfg.DataDir, "s3"),
			CacheBytes: cfg.CacheBytes})
		if err != nil {
			return nil, err
		}
		return retry.Wrap(s, retry.Policy{Log: cfg.Log}), nil
	}
	if cfg.Store != "" {
		u, err := url.Parse(cfg.Store)
		if err != nil || u.Scheme != "file" || u.Host != "" || !filepath.IsAbs(u.Path) {
			return nil, fmt.Errorf("--store %q: want file:///ABSOLUTE/PATH or s3://BUCKET/PREFIX?endpoint=URL", cfg.Store)
		}
		root = u.Path
	}
	return localfs.New(ctx, localfs.Config{Root: root})
}

// assemble builds the layers over an open catalog and store and recovers
// whatever a crash left half done.
func assemble(ctx context.Context, cfg Config, cat catalog.Catalog, store storage.Store, authn auth.Authenticator) (*Server, error) {
	shared := cfg.Catalog != "" // other servers may use the same catalog and store
	cfg.Transfer.Shared = shared
	tm, err := transfer.New(cat, store, cfg.Transfer, cfg.Log)
	if err != nil {
		return nil, err
	}
	api := glance.New(cat, store, tm, authn, cfg.Log, glance.Config{MaxImageSize: cfg.MaxImageSize})
	if shared {
		// Start-up recovery assumes that nothing else writes: with a shared
		// catalog an upload "in progress" may be another server's, alive.
		// Interrupted uploads then stay as they are (README "Several
		// servers"); a per-upload lease would let a server take them over.
		cfg.Log.Info("shared catalog: start-up recovery of interrupted uploads is off")
	} else if err := recoverAll(ctx, cfg, tm, api); err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, cat: cat, store: store, transfers: tm, api: api,
		imageio: imageio.New(tm, cfg.Log, imageio.Config{UnixSocket: cfg.DataSocket})}, nil
}

func recoverAll(ctx context.Context, cfg Config, tm *transfer.Manager, api *glance.API) error {
	if err := tm.Recover(ctx); err != nil {
		return err
	}
	n, err := api.Recover(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		cfg.Log.Info("recovered interrupted uploads", "images", n)
	}
	return nil
}

func authenticator(cfg Config) (auth.Authenticator, error) {
	if cfg.Auth == "tokens" {
		return auth.LoadTokens(cfg.TokensFile)
	}
	return auth.None{}, nil
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", healthz)
	data := s.imageio.DataHandler()
	mux.Handle("/images/", data)
	mux.Handle("/info/", data)
	mux.Handle("/", s.api.Handler())
	return accessLog(s.cfg.Log, mux)
}

// dataRoutes is what the local data socket serves: the transfer data path.
func (s *Server) dataRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", healthz)
	mux.Handle("/", s.imageio.DataHandler())
	return accessLog(s.cfg.Log, mux)
}

func healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	w.Write([]byte("ok\n"))
}

func (s *Server) newHTTP(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ConnContext:       tcpcork.WithConn, // downloads cork their connection
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.cfg.Log.Handler(), slog.LevelWarn),
	}
}

// Listen binds the TCP listener and the unix sockets.
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return err
	}
	s.add(ln, s.routes())
	for _, sock := range []struct {
		path string
		h    http.Handler
		mode os.FileMode
	}{{s.cfg.DataSocket, s.dataRoutes(), 0o660}, {s.cfg.ControlSocket, accessLog(s.cfg.Log, s.imageio.ControlHandler()), 0o600}} {
		if sock.path == "" {
			continue
		}
		ln, err := listenUnix(sock.path, sock.mode)
		if err != nil {
			s.closeListeners()
			return err
		}
		s.add(ln, sock.h)
	}
	return nil
}

func (s *Server) add(ln net.Listener, h http.Handler) {
	s.listeners = append(s.listeners, ln)
	s.servers = append(s.servers, s.newHTTP(h))
}

func (s *Server) closeListeners() {
	for _, ln := range s.listeners {
		ln.Close()
	}
}

// listenUnix binds a unix socket, replacing a stale one from a previous run.
func listenUnix(path string, mode os.FileMode) (net.Listener, error) {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, mode); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// Addr is the bound TCP address (useful with port 0).
func (s *Server) Addr() string { return s.listeners[0].Addr().String() }

// Serve answers requests until ctx ends, then drains and closes everything.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, len(s.servers))
	for i, srv := range s.servers {
		go func() { errc <- srv.Serve(s.listeners[i]) }()
	}
	go s.reap(ctx)
	bctx, stopBackfill := context.WithCancel(context.Background())
	backfilled := make(chan struct{})
	go func() {
		defer close(backfilled)
		if err := s.transfers.Backfill().Run(bctx); err != nil {
			s.cfg.Log.Error("checksum backfill stopped", "err", err)
		}
	}()
	s.cfg.Log.Info("serving", "listen", s.Addr(), "data", s.cfg.DataDir, "auth", s.cfg.Auth,
		"control_socket", s.cfg.ControlSocket, "data_socket", s.cfg.DataSocket)
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range s.servers {
		if serr := srv.Shutdown(sctx); err == nil {
			err = serr
		}
	}
	s.api.Close()
	stopBackfill() // after the drain: a finalize in it may still queue work
	<-backfilled
	if cerr := s.cat.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// reap ends expired transfers every few seconds.
func (s *Server) reap(ctx context.Context) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.transfers.Reap(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Log.Warn("reaping transfers", "err", err)
			}
		}
	}
}
