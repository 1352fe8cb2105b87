package glance

import (
	"context"
	"errors"
	"net/http"

	"hangar/internal/auth"
	"hangar/internal/catalog"
)

// owns reports whether the identity may change the image.
func owns(id auth.Identity, im *catalog.Image) bool {
	return id.Admin || (id.Project != "" && im.Owner != nil && *im.Owner == id.Project)
}

// canSee applies Glance's visibility rules to one image.
func (a *API) canSee(ctx context.Context, id auth.Identity, im *catalog.Image) (bool, error) {
	if owns(id, im) || im.Visibility == catalog.Public || im.Visibility == catalog.Community {
		return true, nil
	}
	if im.Visibility != catalog.Shared || id.Project == "" {
		return false, nil
	}
	_, err := a.cat.GetMember(ctx, im.ID, id.Project)
	if errors.Is(err, catalog.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func noImage(imageID string) *Error {
	return errorf(http.StatusNotFound, "No image found with ID %s", imageID)
}

// loadImage returns the image if the identity may see it; an image it may
// not see is reported as missing, so ids of private images do not leak.
func (a *API) loadImage(ctx context.Context, id auth.Identity, imageID string) (*catalog.Image, error) {
	im, err := a.cat.GetImage(ctx, imageID)
	return im, a.visible(ctx, id, imageID, im, err)
}

// visible turns a lookup's outcome into Glance's answer: a missing image,
// or one the identity may not see, is 404 alike.
func (a *API) visible(ctx context.Context, id auth.Identity, imageID string, im *catalog.Image, err error) error {
	if errors.Is(err, catalog.ErrNotFound) {
		return noImage(imageID)
	}
	if err != nil {
		return err
	}
	ok, err := a.canSee(ctx, id, im)
	if err != nil {
		return err
	}
	if !ok {
		return noImage(imageID)
	}
	return nil
}

// loadOwnImage is loadImage plus the right to modify it.
func (a *API) loadOwnImage(ctx context.Context, id auth.Identity, imageID string) (*catalog.Image, error) {
	im, err := a.loadImage(ctx, id, imageID)
	if err != nil {
		return nil, err
	}
	if !owns(id, im) {
		return nil, errorf(http.StatusForbidden, "You are not permitted to modify image %s.", imageID)
	}
	return im, nil
}

// update runs a catalog update, turning a vanished image into Glance's 404.
func (a *API) update(ctx context.Context, imageID string, mutate func(*catalog.Image) error) (*catalog.Image, error) {
	im, err := a.cat.UpdateImage(ctx, imageID, mutate)
	a.hot.forget(imageID)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, noImage(imageID)
	}
	return im, err
}
