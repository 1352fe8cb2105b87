package glance

import (
	"encoding/json"
	"net/http"
	"strconv"

	"hangar/internal/auth"
	"hangar/internal/catalog"
)

// Glance's default quotas (image_property_quota, image_tag_quota).
const (
	maxProperties = 128
	maxTags       = 128
)

// checkWritable refuses keys a client may never set.
func checkWritable(key string) *Error {
	if readOnly(key) {
		return errorf(http.StatusForbidden, "Attribute '%s' is read-only.", key)
	}
	if reserved(key) {
		return errorf(http.StatusForbidden, "Attribute '%s' is reserved.", key)
	}
	return nil
}

func optString(v any) *string {
	if s, ok := v.(string); ok {
		return &s
	}
	return nil
}

func nonNegative(key string, v any) (int64, *Error) {
	n, err := strconv.ParseInt(v.(json.Number).String(), 10, 64)
	if err != nil || n < 0 {
		return 0, errorf(http.StatusBadRequest, "Invalid value for %s: %s. It must be a non-negative integer.", key, pyRepr(v))
	}
	return n, nil
}

// setField applies one validated key to the image. v has passed
// validateValue, so its JSON type is the schema's.
func setField(im *catalog.Image, id auth.Identity, key string, v any) *Error {
	if err := validateValue(key, v); err != nil {
		return err
	}
	switch key {
	case "id":
		im.ID = v.(string)
	case "name":
		im.Name = optString(v)
	case "disk_format", "container_format":
		if im.Status != catalog.StatusQueued {
			return errorf(http.StatusForbidden, "Attribute %s can be only replaced for a queued image.", key)
		}
		if key == "disk_format" {
			im.DiskFormat = optString(v)
		} else {
			im.ContainerFormat = optString(v)
		}
	case "visibility":
		return setVisibility(im, id, v.(string))
	case "protected":
		im.Protected = v.(bool)
	case "os_hidden":
		im.OSHidden = v.(bool)
	case "min_ram", "min_disk":
		n, err := nonNegative(key, v)
		if err != nil {
			return err
		}
		if key == "min_ram" {
			im.MinRAM = n
		} else {
			im.MinDisk = n
		}
	case "owner":
		if !id.Admin {
			return errorf(http.StatusForbidden, "Attribute 'owner' is only modifiable by an admin.")
		}
		im.Owner = optString(v)
	case "tags":
		return setTags(im, v.([]any))
	default:
		return setProperty(im, key, v)
	}
	return nil
}

func setVisibility(im *catalog.Image, id auth.Identity, vis string) *Error {
	// Glance's publicize_image policy names the admin role, so even the
	// unauthenticated admin context may not publish (captured: 403).
	if vis == catalog.Public && im.Visibility != catalog.Public && !id.HasRole("admin") {
		return errorf(http.StatusForbidden, "You are not authorized to complete publicize_image action.")
	}
	im.Visibility = vis
	return nil
}

func setTags(im *catalog.Image, items []any) *Error {
	im.Tags = []string{}
	for _, t := range items {
		if !im.HasTag(t.(string)) {
			im.Tags = append(im.Tags, t.(string))
		}
	}
	if len(im.Tags) > maxTags {
		return errorf(http.StatusRequestEntityTooLarge, "Attempted to add %d tags, the maximum is %d.", len(im.Tags), maxTags)
	}
	return nil
}

func setProperty(im *catalog.Image, key string, v any) *Error {
	if key == "" {
		return errorf(http.StatusBadRequest, "Property names must not be empty.")
	}
	s, ok := v.(string)
	if !ok { // null for a nullable base property (kernel_id …): unset it
		im.RemoveProperty(key)
		return nil
	}
	im.SetProperty(key, s)
	if len(im.Properties) > maxProperties {
		return errorf(http.StatusRequestEntityTooLarge, "Attempted to set %d properties, the maximum is %d.", len(im.Properties), maxProperties)
	}
	return nil
}
