package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
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
		Short: "Run the server (Image API v2) on a data directory",
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
	f.StringVar(&cfg.Listen, "listen", envOr("HANGAR_LISTEN", "127.0.0.1:9292"), "address of the Image API listener")
	f.StringVar(&cfg.Auth, "auth", envOr("HANGAR_AUTH", "none"), "authentication: none or tokens")
	f.StringVar(&cfg.TokensFile, "tokens", envOr("HANGAR_TOKENS", ""), "tokens file for --auth tokens")
	f.Int64Var(&cfg.MaxImageSize, "max-image-size", glance.DefaultMaxImageSize, "largest image accepted, in bytes")
	f.StringVar(&level, "log-level", "info", "log level: debug, info, warn, error")
	return cmd
}
