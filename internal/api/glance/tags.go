package glance

import (
	"net/http"
	"slices"

	"hangar/internal/auth"
	"hangar/internal/catalog"
)

func (a *API) addTag(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	tag := r.PathValue("tag")
	if err := validateValue("tags", []any{tag}); err != nil {
		return errorf(http.StatusBadRequest, "Tag %q is longer than 255 characters.", tag)
	}
	if _, err := a.loadOwnImage(r.Context(), id, r.PathValue("id")); err != nil {
		return err
	}
	_, err := a.update(r.Context(), r.PathValue("id"), func(im *catalog.Image) error {
		if im.HasTag(tag) {
			return nil
		}
		if len(im.Tags) >= maxTags {
			return errorf(http.StatusRequestEntityTooLarge, "Maximum number of tags (%d) reached.", maxTags)
		}
		im.Tags = append(im.Tags, tag)
		return nil
	})
	if err != nil {
		return err
	}
	return noContent(w)
}

func (a *API) deleteTag(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	tag := r.PathValue("tag")
	if _, err := a.loadOwnImage(r.Context(), id, r.PathValue("id")); err != nil {
		return err
	}
	_, err := a.update(r.Context(), r.PathValue("id"), func(im *catalog.Image) error {
		i := slices.Index(im.Tags, tag)
		if i < 0 {
			return errorf(http.StatusNotFound, "Tag %s not found.", tag)
		}
		im.Tags = slices.Delete(im.Tags, i, i+1)
		return nil
	})
	if err != nil {
		return err
	}
	return noContent(w)
}

// deactivate and reactivate follow Glance: only active ↔ deactivated, and
// repeating either is a no-op.
func (a *API) deactivate(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	return a.setActivation(w, r, id, catalog.StatusDeactivated)
}

func (a *API) reactivate(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	return a.setActivation(w, r, id, catalog.StatusActive)
}

func (a *API) setActivation(w http.ResponseWriter, r *http.Request, id auth.Identity, to string) error {
	if _, err := a.loadOwnImage(r.Context(), id, r.PathValue("id")); err != nil {
		return err
	}
	_, err := a.update(r.Context(), r.PathValue("id"), func(im *catalog.Image) error {
		if im.Status != catalog.StatusActive && im.Status != catalog.StatusDeactivated {
			verb := map[string]string{catalog.StatusActive: "reactivate", catalog.StatusDeactivated: "deactivate"}[to]
			return errorf(http.StatusForbidden, "Not allowed to %s image in status '%s'", verb, im.Status)
		}
		im.Status = to
		return nil
	})
	if err != nil {
		return err
	}
	return noContent(w)
}
