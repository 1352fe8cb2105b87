package glance

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"hangar/internal/auth"
	"hangar/internal/catalog"
)

// Media types of Glance's JSON-patch dialects. v2.1 is RFC 6902's
// {"op": "add", "path": …}; v2.0 names the op as the key: {"add": path}.
const (
	patchV21 = "application/openstack-images-v2.1-json-patch"
	patchV20 = "application/openstack-images-v2.0-json-patch"
)

// patchOp is one decoded operation on a top-level attribute.
type patchOp struct {
	Op       string // add, replace, remove
	Key      string // the attribute, unescaped from the JSON pointer
	Value    any
	HasValue bool
}

// decodePatch parses a JSON-patch document of the given dialect.
func decodePatch(body []byte, v20 bool) ([]patchOp, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw []map[string]any
	if err := dec.Decode(&raw); err != nil || dec.More() {
		if json.Valid(body) {
			return nil, errorf(http.StatusBadRequest, "Request body must be a JSON array of operation objects.")
		}
		return nil, errMalformed
	}
	ops := make([]patchOp, 0, len(raw))
	for _, m := range raw {
		op, err := decodeOp(m, v20)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func decodeOp(m map[string]any, v20 bool) (patchOp, error) {
	var op patchOp
	var path any
	if v20 {
		for _, name := range []string{"add", "replace", "remove"} {
			if p, ok := m[name]; ok {
				if op.Op != "" {
					return op, errorf(http.StatusBadRequest, "Operation objects must contain exactly one member named \"add\", \"remove\", or \"replace\".")
				}
				op.Op, path = name, p
			}
		}
	} else {
		name, _ := m["op"].(string)
		if name != "add" && name != "replace" && name != "remove" {
			return op, errorf(http.StatusBadRequest, "Invalid operation: `%v`: Unable to find `op` in JSON Schema change. It must be one of the following: add, remove, replace.", m["op"])
		}
		op.Op, path = name, m["path"]
	}
	if op.Op == "" {
		return op, errorf(http.StatusBadRequest, "Operation objects must contain exactly one member named \"add\", \"remove\", or \"replace\".")
	}
	key, err := pointerKey(path)
	if err != nil {
		return op, err
	}
	op.Key = key
	op.Value, op.HasValue = m["value"]
	if op.Op != "remove" && !op.HasValue {
		return op, errorf(http.StatusBadRequest, "Operation \"%s\" requires a member named \"value\".", op.Op)
	}
	return op, nil
}

// pointerKey turns "/name" into "name" (RFC 6901 escapes ~0 and ~1). Only
// top-level attributes exist, so nested pointers are refused.
func pointerKey(path any) (string, error) {
	p, ok := path.(string)
	if !ok {
		return "", errorf(http.StatusBadRequest, "Unable to find '/' in JSON Schema change: the path must be a string.")
	}
	if !strings.HasPrefix(p, "/") {
		return "", errorf(http.StatusBadRequest, "Pointer `%s` does not start with \"/\".", p)
	}
	p = p[1:]
	if strings.Contains(p, "/") {
		return "", errorf(http.StatusBadRequest, "Nested paths are not allowed")
	}
	if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(p, "~0", ""), "~1", ""), "~") {
		return "", errorf(http.StatusBadRequest, "Pointer `/%s` contains \"~\" not part of a recognized escape sequence.", p)
	}
	return strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~"), nil
}

// coreAttrs are attributes of the image itself, as opposed to custom
// properties; they can be replaced but not removed.
var coreAttrs = map[string]bool{"name": true, "disk_format": true, "container_format": true,
	"visibility": true, "protected": true, "min_ram": true, "min_disk": true, "owner": true,
	"os_hidden": true, "tags": true, "id": true}

// applyPatch applies ops in order; the first failure aborts all of them
// (the catalog transaction is rolled back).
func applyPatch(im *catalog.Image, id auth.Identity, ops []patchOp) error {
	for _, op := range ops {
		if err := checkWritable(op.Key); err != nil {
			return err
		}
		if op.Key == "id" {
			return errorf(http.StatusForbidden, "Attribute 'id' is read-only.")
		}
		_, exists := im.Property(op.Key)
		switch {
		case op.Op == "remove" && coreAttrs[op.Key]:
			return errorf(http.StatusForbidden, "Unable to delete as property '%s' is a base property.", op.Key)
		case op.Op == "remove":
			if !im.RemoveProperty(op.Key) {
				return errorf(http.StatusConflict, "Property %s does not exist.", op.Key)
			}
		case op.Op == "replace" && !coreAttrs[op.Key] && !exists:
			return errorf(http.StatusConflict, "Property %s does not exist.", op.Key)
		default:
			if err := setField(im, id, op.Key, op.Value); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *API) updateImage(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";")
	ct = strings.TrimSpace(ct)
	if ct != patchV21 && ct != patchV20 {
		e := errorf(http.StatusUnsupportedMediaType, "The request media type %s is not supported by this server.", ct)
		e.Header = http.Header{"Accept-Patch": {patchV20 + ", " + patchV21}}
		return e
	}
	body, err := readJSONBody(r)
	if err != nil {
		return err
	}
	ops, err := decodePatch(body, ct == patchV20)
	if err != nil {
		return err
	}
	imageID := r.PathValue("id")
	if _, err := a.loadOwnImage(r.Context(), id, imageID); err != nil {
		return err
	}
	im, err := a.update(r.Context(), imageID, func(im *catalog.Image) error {
		return applyPatch(im, id, ops)
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, imageRecord(im))
}
