// Command hangar is the disk-image service: `hangar serve` runs the server;
// other subcommands are its tools.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "hangar",
		Short:         "Hangar stores VM disk images and moves their bytes fast",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	var f clientFlags
	clients := []*cobra.Command{imageCmd(&f), uploadCmd(&f), downloadCmd(&f)}
	for _, c := range clients {
		f.register(c)
	}
	root.AddCommand(append(clients, serveCmd())...)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	// Ctrl-C cancels a transfer cleanly (the upload removes its image).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := root.ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "hangar:", err)
		os.Exit(exitCode(err))
	}
}

// envOr returns the environment variable's value, or def when unset.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}
