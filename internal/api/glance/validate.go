package glance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// propSchema is the part of a JSON-schema property Glance's image schema
// uses. Validation is driven by the served schema itself, so what clients
// read and what the server enforces cannot drift apart.
type propSchema struct {
	Type      json.RawMessage `json:"type"`
	Enum      []any           `json:"enum"`
	MaxLength *int            `json:"maxLength"`
	Pattern   string          `json:"pattern"`
	ReadOnly  bool            `json:"readOnly"`
	Items     *propSchema     `json:"items"`
}

func (p *propSchema) types() []string {
	var one string
	if json.Unmarshal(p.Type, &one) == nil {
		return []string{one}
	}
	var many []string
	json.Unmarshal(p.Type, &many)
	return many
}

var imageSchema = sync.OnceValue(func() map[string]*propSchema {
	raw, err := schemas.ReadFile("schemas/image.json")
	if err != nil {
		panic(err)
	}
	var doc struct {
		Properties map[string]*propSchema `json:"properties"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		panic(err)
	}
	return doc.Properties
})

// readOnly reports whether a client may not set key.
func readOnly(key string) bool {
	if s, ok := imageSchema()[key]; ok && s.ReadOnly {
		return true
	}
	return false
}

// reserved keys belong to Glance itself.
func reserved(key string) bool {
	return strings.HasPrefix(key, "os_glance") || key == "locations" || key == "deleted" || key == "deleted_at"
}

func schemaError(key string, v any, why string) *Error {
	return errorf(http.StatusBadRequest, "Provided object does not match schema 'image': %s\n\nOn instance['%s']:\n    %s", why, key, pyRepr(v))
}

// validateValue checks one value against the image schema; keys the schema
// does not name are custom properties, which must be strings.
func validateValue(key string, v any) *Error {
	s, ok := imageSchema()[key]
	if !ok {
		s = &propSchema{Type: json.RawMessage(`"string"`)}
		if len(key) > 255 {
			return errorf(http.StatusBadRequest, "Provided object does not match schema 'image': property name %q is too long", key)
		}
	}
	return check(key, s, v)
}

func check(key string, s *propSchema, v any) *Error {
	if !typeOK(s.types(), v) {
		return schemaError(key, v, fmt.Sprintf("%s is not of type %s", pyRepr(v), strings.Join(quoteAll(s.types()), ", ")))
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return e == v }) {
		return schemaError(key, v, fmt.Sprintf("%s is not one of %s", pyRepr(v), pyRepr(s.Enum)))
	}
	if str, ok := v.(string); ok {
		if s.MaxLength != nil && len([]rune(str)) > *s.MaxLength {
			return schemaError(key, v, fmt.Sprintf("%s is too long", pyRepr(v)))
		}
		if s.Pattern != "" && !regexp.MustCompile(s.Pattern).MatchString(str) {
			return schemaError(key, v, fmt.Sprintf("%s does not match %s", pyRepr(v), pyRepr(s.Pattern)))
		}
	}
	if arr, ok := v.([]any); ok && s.Items != nil {
		for _, item := range arr {
			if err := check(key, s.Items, item); err != nil {
				return err
			}
		}
	}
	return nil
}

func typeOK(types []string, v any) bool {
	for _, t := range types {
		switch x := v.(type) {
		case nil:
			if t == "null" {
				return true
			}
		case string:
			if t == "string" {
				return true
			}
		case bool:
			if t == "boolean" {
				return true
			}
		case json.Number:
			if t == "number" || t == "integer" && !strings.ContainsAny(x.String(), ".eE") {
				return true
			}
		case []any:
			if t == "array" {
				return true
			}
		case map[string]any:
			if t == "object" {
				return true
			}
		}
	}
	return false
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "'" + s + "'"
	}
	return out
}

// pyRepr renders a JSON value the way Glance's (Python) messages show it.
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return "'" + x + "'"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case json.Number:
		return x.String()
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
