package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"hangar/internal/client"
)

func progressMode(f *clientFlags, flag string) string {
	switch {
	case f.output == "json":
		return "json"
	case flag == "always" || (flag == "auto" && isatty.IsTerminal(os.Stderr.Fd())):
		return "bar"
	}
	return ""
}

func uploadCmd(f *clientFlags) *cobra.Command {
	var m metaFlags
	var name, progress string
	var conns int
	cmd := &cobra.Command{
		Use:   "upload FILE",
		Short: "Upload a disk image (sparse-aware, several connections, by sendfile)",
		Long: `Upload FILE as a new image. The file's holes and all-zero blocks are sent as
zero requests, its data over --connections connections with the bytes going
from the file to the socket by sendfile(2); the server's checksum is compared
with the file's at the end. FILE "-" reads standard input as one stream.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			return runUpload(cmd, c, f, &m, args[0], name, conns, progressMode(f, progress))
		},
	}
	m.register(cmd)
	cmd.Flags().StringVar(&name, "name", "", "image name (default: the file's base name)")
	cmd.Flags().IntVar(&conns, "connections", 4, "parallel connections (capped by the server's max_writers)")
	cmd.Flags().StringVar(&progress, "progress", "auto", "progress bar: auto (on a terminal), always, never")
	return cmd
}

func runUpload(cmd *cobra.Command, c *client.Client, f *clientFlags, m *metaFlags, path, name string, conns int, mode string) error {
	ctx := cmd.Context()
	var file *os.File
	var size int64
	if path != "-" {
		fi, err := os.Stat(path)
		if err != nil {
			return usageError{err}
		}
		if !fi.Mode().IsRegular() {
			return usageError{fmt.Errorf("%s is not a regular file", path)}
		}
		if file, err = os.Open(path); err != nil {
			return usageError{err}
		}
		defer file.Close()
		size = fi.Size()
		if m.diskFormat == "" {
			m.diskFormat = detectFormat(file)
		}
		if name == "" {
			name = filepath.Base(path)
		}
	}
	if m.diskFormat == "" {
		m.diskFormat = "raw"
	}
	if m.containerFormat == "" {
		m.containerFormat = "bare"
	}
	if name == "" {
		return usageError{fmt.Errorf("--name is needed when reading standard input")}
	}
	fields, err := m.fields(name)
	if err != nil {
		return err
	}
	if len(m.tags) > 0 {
		fields["tags"] = m.tags
	}
	im, err := c.CreateImage(ctx, fields)
	if err != nil {
		return err
	}
	p := &client.Progress{Total: size}
	rep := startReporter(p, cmd.ErrOrStderr(), mode, "upload "+name)
	err = sendImage(ctx, c, im.ID(), path, size, conns, p)
	rep.finish(cmd.ErrOrStderr(), mode)
	if err != nil {
		// Leave nothing half-created behind: the image goes with its data.
		if derr := c.DeleteImage(context.WithoutCancel(ctx), im.ID()); derr != nil {
			return fmt.Errorf("upload of %s failed: %w (and removing the image failed: %v)", name, err, derr)
		}
		return fmt.Errorf("upload of %s failed: %w", name, err)
	}
	if im, err = c.GetImage(ctx, im.ID()); err != nil {
		return err
	}
	return f.printImage(cmd.OutOrStdout(), im)
}

func sendImage(ctx context.Context, c *client.Client, id, path string, size int64, conns int, p *client.Progress) error {
	if path == "-" {
		return c.UploadStream(ctx, id, os.Stdin)
	}
	if size == 0 { // a transfer needs a size; an empty image is one empty PUT
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return c.UploadStream(ctx, id, f)
	}
	_, err := c.UploadFile(ctx, id, path, client.TransferOptions{Connections: conns, Progress: p})
	return err
}
