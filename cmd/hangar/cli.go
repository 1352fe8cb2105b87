package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"hangar/internal/client"
)

// Exit codes of the client commands (README "Exit codes").
const (
	exitOK          = 0
	exitFailed      = 1 // the server refused or the transfer failed
	exitUsage       = 2 // bad arguments, or a local file that cannot be used
	exitNotFound    = 3 // no such image
	exitAuth        = 4 // the token was refused
	exitUnreachable = 5 // no server at --url
)

// usageError marks errors that are the caller's (exit 2).
type usageError struct{ error }

func exitCode(err error) int {
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	case errors.Is(err, client.ErrNotFound):
		return exitNotFound
	case errors.Is(err, client.ErrUnauthorized):
		return exitAuth
	case errors.Is(err, client.ErrUnreachable):
		return exitUnreachable
	}
	return exitFailed
}

// clientFlags are the flags every client command shares.
type clientFlags struct {
	url, token, output string
}

func (f *clientFlags) register(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&f.url, "url", envOr("HANGAR_URL", "http://127.0.0.1:9292"), "server URL (HANGAR_URL)")
	cmd.PersistentFlags().StringVar(&f.token, "token", envOr("HANGAR_TOKEN", ""), "API token, sent as X-Auth-Token (HANGAR_TOKEN)")
	cmd.PersistentFlags().StringVarP(&f.output, "output", "o", "table", "output: table or json")
}

func (f *clientFlags) client() (*client.Client, error) {
	if f.output != "table" && f.output != "json" {
		return nil, usageError{fmt.Errorf("--output must be table or json, not %q", f.output)}
	}
	c, err := client.New(f.url, f.token)
	if err != nil {
		return nil, usageError{err}
	}
	return c, nil
}

// resolve makes the client and finds the image ref names (id or name).
func (f *clientFlags) resolve(cmd *cobra.Command, ref string) (*client.Client, client.Image, error) {
	c, err := f.client()
	if err != nil {
		return nil, nil, err
	}
	im, err := c.Resolve(cmd.Context(), ref)
	return c, im, err
}

// printImage shows one image: a property/value table like `openstack image
// show`, or the record as JSON.
func (f *clientFlags) printImage(w io.Writer, im client.Image) error {
	if f.output == "json" {
		return json.NewEncoder(w).Encode(im)
	}
	keys := make([]string, 0, len(im))
	for k := range im {
		if k != "self" && k != "file" && k != "schema" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\n", k, show(im[k]))
	}
	return tw.Flush()
}

func show(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return fmt.Sprintf("%.0f", x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = show(e)
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}

func (f *clientFlags) printImages(w io.Writer, ims []client.Image) error {
	if f.output == "json" {
		if ims == nil {
			ims = []client.Image{}
		}
		return json.NewEncoder(w).Encode(ims)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tName\tStatus\tSize\tFormat")
	for _, im := range ims {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", im.ID(), im.Str("name"), im.Str("status"), show(im["size"]), im.Str("disk_format"))
	}
	return tw.Flush()
}
