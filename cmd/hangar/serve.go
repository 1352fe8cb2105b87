package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"hangar/internal/api/glance"
	"hangar/internal/server"
)

func serveCmd() *cobra.Command {
	var cfg server.Config
	var level string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the server (Image API v2 and the imageio transfer API) on a data directory",
		Long: `Run the Hangar server. The embedded default keeps everything in one data
directory: a SQLite catalog (catalog.db) and the image files (store/).

Environment: HANGAR_DATA, HANGAR_LISTEN, HANGAR_AUTH, HANGAR_TOKENS set the
defaults of the flags of the same names.

Tokens file (--auth tokens): one "TOKEN PROJECT [ROLE,ROLE...]" per line;
clients send the token as X-Auth-Token. The admin role may publish images
and sees every project's images.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var lv slog.Level
			if err := lv.UnmarshalText([]byte(level)); err != nil {
				return err
			}
			cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv}))
			cfg.ControlSocket = socketPath(cfg.ControlSocket, cfg.DataDir, "control.sock")
			cfg.DataSocket = socketPath(cfg.DataSocket, cfg.DataDir, "data.sock")
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			srv, err := server.New(ctx, cfg)
			if err != nil {
				return err
			}
			if err := srv.Listen(); err != nil {
				return err
			}
			return srv.Serve(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data", envOr("HANGAR_DATA", "./hangar-data"), "data directory (catalog and image files)")
	f.StringVar(&cfg.Catalog, "catalog", envOr("HANGAR_CATALOG", ""), "PostgreSQL DSN of a catalog shared by several servers (postgres://…); default SQLite in the data directory")
	f.StringVar(&cfg.Store, "store", envOr("HANGAR_STORE", ""), "where images live: file:///PATH (a shared mount for several servers) or s3://BUCKET/PREFIX?endpoint=URL; default DATA/store")
	f.Int64Var(&cfg.CacheBytes, "cache-size", 10<<30, "bytes of local read cache for an s3:// store")
	f.StringVar(&cfg.Listen, "listen", envOr("HANGAR_LISTEN", "127.0.0.1:9292"), "address of the Image API listener")
	f.StringVar(&cfg.Auth, "auth", envOr("HANGAR_AUTH", "none"), "authentication: none or tokens")
	f.StringVar(&cfg.TokensFile, "tokens", envOr("HANGAR_TOKENS", ""), "tokens file for --auth tokens")
	f.Int64Var(&cfg.MaxImageSize, "max-image-size", glance.DefaultMaxImageSize, "largest image accepted, in bytes")
	f.StringVar(&level, "log-level", "info", "log level: debug, info, warn, error")
	f.StringVar(&cfg.ControlSocket, "control-socket", "", "unix socket of the imageio ticket API (default DATA/control.sock)")
	f.StringVar(&cfg.DataSocket, "data-socket", "", `unix socket of the transfer data path for local clients (default DATA/data.sock; "none" disables)`)
	f.IntVar(&cfg.Transfer.MaxReaders, "max-readers", 8, "concurrent reads per transfer")
	f.IntVar(&cfg.Transfer.MaxWriters, "max-writers", 8, "concurrent writes per transfer")
	return cmd
}

// socketPath resolves a socket flag: empty means the default file in the
// data directory, "none" means no socket.
func socketPath(flag, dataDir, name string) string {
	switch flag {
	case "":
		return filepath.Join(dataDir, name)
	case "none":
		return ""
	}
	return flag
}
