package glance

import (
	"embed"
	"net/http"

	"hangar/internal/auth"
)

// schemas are the exact documents real Glance serves: python-glanceclient
// builds its command-line options from /v2/schemas/image.
//
//go:embed schemas/*.json
var schemas embed.FS

// apiVersions is what real Glance 25.1 reports with multi-store and without
// the image cache API (v2.14, v2.16), which Hangar does not serve either.
var apiVersions = []string{"v2.15", "v2.13", "v2.12", "v2.11", "v2.10", "v2.9",
	"v2.8", "v2.7", "v2.6", "v2.5", "v2.4", "v2.3", "v2.2", "v2.1", "v2.0"}

func (a *API) versions(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		href := baseURL(r) + "/v2/"
		type link struct {
			Rel  string `json:"rel"`
			Href string `json:"href"`
		}
		type version struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Links  []link `json:"links"`
		}
		var vs []version
		for i, v := range apiVersions {
			st := "SUPPORTED"
			if i == 0 {
				st = "CURRENT"
			}
			vs = append(vs, version{ID: v, Status: st, Links: []link{{"self", href}}})
		}
		writeJSON(w, status, map[string]any{"versions": vs})
	}
}

func (a *API) schema(w http.ResponseWriter, r *http.Request, _ auth.Identity) error {
	name := r.PathValue("name")
	if r.PathValue("sub") != "" {
		name = "" // metadefs schemas are not served: Hangar has no metadefs API
	}
	body, err := schemas.ReadFile("schemas/" + name + ".json")
	if name == "" || err != nil {
		return errorf(http.StatusNotFound, "The resource could not be found.")
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(body)
	return err
}

func (a *API) infoImport(w http.ResponseWriter, r *http.Request, _ auth.Identity) error {
	return writeJSON(w, http.StatusOK, map[string]any{"import-methods": map[string]any{
		"description": "Import methods available.",
		"type":        "array",
		"value":       importMethods,
	}})
}

func (a *API) infoStores(w http.ResponseWriter, r *http.Request, _ auth.Identity) error {
	return writeJSON(w, http.StatusOK, map[string]any{"stores": []map[string]string{{"id": StoreID, "default": "true"}}})
}
