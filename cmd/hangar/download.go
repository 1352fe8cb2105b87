package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"hangar/internal/client"
)

func downloadCmd(f *clientFlags) *cobra.Command {
	var progress string
	var conns int
	cmd := &cobra.Command{
		Use:   "download IMAGE FILE",
		Short: "Download an image (parallel ranges, holes kept as holes)",
		Long: `Download IMAGE (id or unique name) to FILE: data extents as parallel ranged
requests written at their offsets, holes left unwritten so FILE is sparse, and
a checksum comparison at the end. FILE "-" writes to standard output in order.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, im, err := f.resolve(cmd, args[0])
			if err != nil {
				return err
			}
			if st := im.Str("status"); st != "active" {
				return fmt.Errorf("image %s is %s, not active: nothing to download", args[0], st)
			}
			if args[1] == "-" {
				_, _, err := c.DownloadStream(cmd.Context(), im.ID(), os.Stdout)
				return err
			}
			mode := progressMode(f, progress)
			p := &client.Progress{}
			rep := startReporter(p, cmd.ErrOrStderr(), mode, "download "+im.Str("name"))
			_, err = c.DownloadFile(cmd.Context(), im.ID(), args[1], client.TransferOptions{Connections: conns, Progress: p})
			rep.finish(cmd.ErrOrStderr(), mode)
			return err
		},
	}
	cmd.Flags().IntVar(&conns, "connections", 4, "parallel connections (capped by the server's max_readers)")
	cmd.Flags().StringVar(&progress, "progress", "auto", "progress bar: auto (on a terminal), always, never")
	return cmd
}
