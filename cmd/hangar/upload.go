package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"

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
	var resume bool
	var flushEvery int64
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
			return runUpload(cmd, c, f, &m, uploadArgs{path: args[0], name: name, conns: conns, resume: resume, flushEvery: flushEvery, mode: progressMode(f, progress)})
		},
	}
	m.register(cmd)
	cmd.Flags().StringVar(&name, "name", "", "image name (default: the file's base name)")
	cmd.Flags().IntVar(&conns, "connections", 4, "parallel connections (capped by the server's max_writers)")
	cmd.Flags().StringVar(&progress, "progress", "auto", "progress bar: auto (on a terminal), always, never")
	cmd.Flags().Int64Var(&flushEvery, "flush-every", 256<<20, "bytes a connection sends between flushes: what an interrupted upload may have to send again")
	cmd.Flags().BoolVar(&resume, "resume", false, "require an interrupted upload of this name to continue (rerunning continues one anyway)")
	return cmd
}

type uploadArgs struct {
	path, name, mode string
	conns            int
	resume           bool
	flushEvery       int64
}

func runUpload(cmd *cobra.Command, c *client.Client, f *clientFlags, m *metaFlags, a uploadArgs) error {
	ctx := cmd.Context()
	size, err := inspectSource(m, &a)
	if err != nil {
		return err
	}
	im, resume, err := findResumable(ctx, c, a.name, size)
	if err != nil {
		return err
	}
	if a.resume && resume == nil {
		return usageError{fmt.Errorf("no interrupted upload named %q of %d bytes to resume", a.name, size)}
	}
	if resume != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "resuming the upload of %s (%s): %s of %s already on the server\n",
			a.name, im.ID(), human(resume.DoneBytes()), human(size))
	} else if im, err = createFor(ctx, c, m, a.name); err != nil {
		return err
	}
	p := &client.Progress{Total: size}
	rep := startReporter(p, cmd.ErrOrStderr(), a.mode, "upload "+a.name)
	err = sendImage(ctx, c, im.ID(), a, size, p, resume)
	rep.finish(cmd.ErrOrStderr(), a.mode)
	if err != nil {
		return uploadFailed(ctx, c, im.ID(), a, err)
	}
	if im, err = c.GetImage(ctx, im.ID()); err != nil {
		return err
	}
	return f.printImage(cmd.OutOrStdout(), im)
}

// inspectSource checks the file before anything is created on the server
// and fills in the name and disk format it implies.
func inspectSource(m *metaFlags, a *uploadArgs) (int64, error) {
	var size int64
	if a.path != "-" {
		fi, err := os.Stat(a.path)
		if err != nil {
			return 0, usageError{err}
		}
		if !fi.Mode().IsRegular() {
			return 0, usageError{fmt.Errorf("%s is not a regular file", a.path)}
		}
		file, err := os.Open(a.path)
		if err != nil {
			return 0, usageError{err}
		}
		defer file.Close()
		size = fi.Size()
		if m.diskFormat == "" {
			m.diskFormat = detectFormat(file)
		}
		if a.name == "" {
			a.name = filepath.Base(a.path)
		}
	}
	if m.diskFormat == "" {
		m.diskFormat = "raw"
	}
	if m.containerFormat == "" {
		m.containerFormat = "bare"
	}
	if a.name == "" {
		return 0, usageError{fmt.Errorf("--name is needed when reading standard input")}
	}
	return size, nil
}

func createFor(ctx context.Context, c *client.Client, m *metaFlags, name string) (client.Image, error) {
	fields, err := m.fields(name)
	if err != nil {
		return nil, err
	}
	if len(m.tags) > 0 {
		fields["tags"] = m.tags
	}
	return c.CreateImage(ctx, fields)
}

// findResumable looks for an interrupted upload: an image of this name in
// status saving with an open write transfer of the same size.
func findResumable(ctx context.Context, c *client.Client, name string, size int64) (client.Image, *client.Transfer, error) {
	if size == 0 {
		return nil, nil, nil
	}
	ims, err := c.ListImages(ctx, url.Values{"name": {name}, "status": {"saving"}})
	if err != nil {
		return nil, nil, err
	}
	for _, im := range ims {
		ts, err := c.ListTransfers(ctx, im.ID())
		if err != nil {
			return nil, nil, err
		}
		for _, t := range ts {
			if t.Phase == "transferring" && t.Size == size && slices.Contains(t.Ops, "write") {
				return im, t, nil
			}
		}
	}
	return nil, nil, nil
}

// uploadFailed decides what a failed upload leaves: an interruption (the
// network, the server, Ctrl-C) keeps the image and its transfer so that
// rerunning the command continues it; anything else removes the image, so
// nothing half-created stays behind.
func uploadFailed(ctx context.Context, c *client.Client, id string, a uploadArgs, err error) error {
	interrupted := errors.Is(err, context.Canceled) || errors.Is(err, client.ErrUnreachable) || client.Transient(err)
	if interrupted && a.path != "-" {
		return fmt.Errorf("upload of %s interrupted (%w); run the same command again to resume", a.name, err)
	}
	if derr := c.DeleteImage(context.WithoutCancel(ctx), id); derr != nil {
		return fmt.Errorf("upload of %s failed: %w (and removing the image failed: %v)", a.name, err, derr)
	}
	return fmt.Errorf("upload of %s failed: %w", a.name, err)
}

func sendImage(ctx context.Context, c *client.Client, id string, a uploadArgs, size int64, p *client.Progress, resume *client.Transfer) error {
	path := a.path
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
	_, err := c.UploadFile(ctx, id, path, client.TransferOptions{Connections: a.conns, Progress: p, Resume: resume, FlushEvery: a.flushEvery})
	return err
}
