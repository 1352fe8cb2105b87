package main

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"hangar/internal/client"
)

// imageCmd is the catalog, shaped like `openstack image`.
func imageCmd(f *clientFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "image", Short: "List, show, create, change and delete images"}
	cmd.AddCommand(imageList(f), imageShow(f), imageCreate(f), imageSet(f), imageDelete(f), imageTag(f))
	return cmd
}

func imageList(f *clientFlags) *cobra.Command {
	var name, status, tag string
	cmd := &cobra.Command{
		Use: "list", Short: "List images", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			q := url.Values{}
			for k, v := range map[string]string{"name": name, "status": status, "tag": tag} {
				if v != "" {
					q.Set(k, v)
				}
			}
			ims, err := c.ListImages(cmd.Context(), q)
			if err != nil {
				return err
			}
			return f.printImages(cmd.OutOrStdout(), ims)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "only images with this name")
	cmd.Flags().StringVar(&status, "status", "", "only images in this status")
	cmd.Flags().StringVar(&tag, "tag", "", "only images with this tag")
	return cmd
}

func imageShow(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use: "show IMAGE", Short: "Show an image (by id or unique name)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, im, err := f.resolve(cmd, args[0])
			if err != nil {
				return err
			}
			return f.printImage(cmd.OutOrStdout(), im)
		},
	}
}

// metaFlags are the image fields create and set share.
type metaFlags struct {
	diskFormat, containerFormat, visibility string
	props, tags                             []string
	protected, unprotected                  bool
}

func (m *metaFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&m.diskFormat, "disk-format", "", "raw, qcow2, iso, vmdk, vhdx, …")
	fl.StringVar(&m.containerFormat, "container-format", "", "bare, ovf, …")
	fl.StringVar(&m.visibility, "visibility", "", "private, shared, community or public")
	fl.StringArrayVar(&m.props, "property", nil, "custom property KEY=VALUE (repeatable)")
	fl.StringArrayVar(&m.tags, "tag", nil, "tag (repeatable)")
	fl.BoolVar(&m.protected, "protected", false, "protect from deletion")
	fl.BoolVar(&m.unprotected, "unprotected", false, "allow deletion")
}

// fields turns the flags into image fields.
func (m *metaFlags) fields(name string) (map[string]any, error) {
	out := map[string]any{}
	set := func(k, v string) {
		if v != "" {
			out[k] = v
		}
	}
	set("name", name)
	set("disk_format", m.diskFormat)
	set("container_format", m.containerFormat)
	set("visibility", m.visibility)
	for _, p := range m.props {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, usageError{fmt.Errorf("--property %q: want KEY=VALUE", p)}
		}
		out[k] = v
	}
	if m.protected && m.unprotected {
		return nil, usageError{fmt.Errorf("--protected and --unprotected contradict each other")}
	}
	if m.protected || m.unprotected {
		out["protected"] = m.protected
	}
	return out, nil
}

func imageCreate(f *clientFlags) *cobra.Command {
	var m metaFlags
	cmd := &cobra.Command{
		Use: "create NAME", Short: "Create an image record without data (see upload)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			fields, err := m.fields(args[0])
			if err != nil {
				return err
			}
			if len(m.tags) > 0 {
				fields["tags"] = m.tags
			}
			im, err := c.CreateImage(cmd.Context(), fields)
			if err != nil {
				return err
			}
			return f.printImage(cmd.OutOrStdout(), im)
		},
	}
	m.register(cmd)
	return cmd
}

func imageSet(f *clientFlags) *cobra.Command {
	var m metaFlags
	var name string
	cmd := &cobra.Command{
		Use: "set IMAGE", Short: "Change an image's metadata", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, im, err := f.resolve(cmd, args[0])
			if err != nil {
				return err
			}
			fields, err := m.fields(name)
			if err != nil {
				return err
			}
			var ops []client.PatchOp
			for k, v := range fields {
				op := "add" // add replaces an existing property in Glance's v2.1 patch
				if _, exists := im[k]; exists {
					op = "replace"
				}
				ops = append(ops, client.PatchOp{Op: op, Path: "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"), Value: v})
			}
			if len(ops) > 0 {
				if im, err = c.UpdateImage(cmd.Context(), im.ID(), ops); err != nil {
					return err
				}
			}
			for _, t := range m.tags {
				if err := c.SetTag(cmd.Context(), im.ID(), t, false); err != nil {
					return err
				}
			}
			if im, err = c.GetImage(cmd.Context(), im.ID()); err != nil {
				return err
			}
			return f.printImage(cmd.OutOrStdout(), im)
		},
	}
	m.register(cmd)
	cmd.Flags().StringVar(&name, "name", "", "new name")
	return cmd
}

func imageDelete(f *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use: "delete IMAGE...", Short: "Delete images", Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			for _, ref := range args {
				im, err := c.Resolve(cmd.Context(), ref)
				if err != nil {
					return err
				}
				if err := c.DeleteImage(cmd.Context(), im.ID()); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func imageTag(f *clientFlags) *cobra.Command {
	var remove bool
	cmd := &cobra.Command{
		Use: "tag IMAGE TAG...", Short: "Add (or with --remove, remove) tags", Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, im, err := f.resolve(cmd, args[0])
			if err != nil {
				return err
			}
			for _, t := range args[1:] {
				if err := c.SetTag(cmd.Context(), im.ID(), t, remove); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&remove, "remove", false, "remove the tags instead")
	return cmd
}
