// Command hangar is the disk-image service: `hangar serve` runs the server;
// other subcommands are its tools.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "hangar",
		Short:         "Hangar stores VM disk images and moves their bytes fast",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCmd())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "hangar:", err)
		os.Exit(1)
	}
}

// envOr returns the environment variable's value, or def when unset.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}
