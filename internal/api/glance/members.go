package glance

import (
	"errors"
	"net/http"

	"hangar/internal/auth"
	"hangar/internal/catalog"
)

// Image sharing as Glance does it: the owner adds projects as members of a
// shared image; each member accepts or rejects it (which decides whether it
// shows up in the member's default image list).

func (a *API) sharedImage(r *http.Request, id auth.Identity) (*catalog.Image, error) {
	im, err := a.loadImage(r.Context(), id, r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if im.Visibility != catalog.Shared {
		return nil, errorf(http.StatusForbidden, "Only shared images have members.")
	}
	return im, nil
}

func (a *API) listMembers(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	im, err := a.sharedImage(r, id)
	if err != nil {
		return err
	}
	ms, err := a.cat.ListMembers(r.Context(), im.ID)
	if err != nil {
		return err
	}
	out := []map[string]string{}
	for _, m := range ms {
		// A member sees only its own membership; the owner sees all.
		if owns(id, im) || m.MemberID == id.Project {
			out = append(out, memberRecord(m))
		}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"members": out, "schema": "/v2/schemas/members"})
}

func (a *API) addMember(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	im, err := a.sharedImage(r, id)
	if err != nil {
		return err
	}
	if !owns(id, im) {
		return errorf(http.StatusForbidden, "You are not permitted to add members to image %s.", im.ID)
	}
	member, err := readStringField(r, "member")
	if err != nil {
		return err
	}
	if member == "" || len(member) > 255 {
		return errorf(http.StatusBadRequest, "Member to be added not specified")
	}
	m := &catalog.Member{ImageID: im.ID, MemberID: member, Status: "pending"}
	defer a.hot.forget(im.ID) // visibility to members changes
	if err := a.cat.AddMember(r.Context(), m); errors.Is(err, catalog.ErrExists) {
		return errorf(http.StatusConflict, "Member %s already associated with image %s.", member, im.ID)
	} else if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, memberRecord(m))
}

// member loads one membership visible to the caller.
func (a *API) member(r *http.Request, id auth.Identity) (*catalog.Image, *catalog.Member, error) {
	im, err := a.sharedImage(r, id)
	if err != nil {
		return nil, nil, err
	}
	memberID := r.PathValue("member")
	m, err := a.cat.GetMember(r.Context(), im.ID, memberID)
	if err == nil && !owns(id, im) && memberID != id.Project {
		err = catalog.ErrNotFound
	}
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, nil, errorf(http.StatusNotFound, "%s is not a member of image %s", memberID, im.ID)
	}
	return im, m, err
}

func (a *API) showMember(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	_, m, err := a.member(r, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, memberRecord(m))
}

func (a *API) updateMember(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	im, m, err := a.member(r, id)
	if err != nil {
		return err
	}
	// Only the member decides; the owner cannot accept on its behalf.
	if m.MemberID != id.Project {
		return errorf(http.StatusForbidden, "You are not permitted to modify the status of member %s of image %s.", m.MemberID, im.ID)
	}
	status, err := readStringField(r, "status")
	if err != nil {
		return err
	}
	if status != "pending" && status != "accepted" && status != "rejected" {
		return errorf(http.StatusBadRequest, "Status must be one of pending, accepted, rejected.")
	}
	defer a.hot.forget(im.ID) // visibility to members changes
	m, err = a.cat.UpdateMemberStatus(r.Context(), im.ID, m.MemberID, status)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, memberRecord(m))
}

func (a *API) deleteMember(w http.ResponseWriter, r *http.Request, id auth.Identity) error {
	im, m, err := a.member(r, id)
	if err != nil {
		return err
	}
	if !owns(id, im) {
		return errorf(http.StatusForbidden, "You are not permitted to remove members of image %s.", im.ID)
	}
	defer a.hot.forget(im.ID) // visibility to members changes
	if err := a.cat.DeleteMember(r.Context(), im.ID, m.MemberID); err != nil {
		return err
	}
	return noContent(w)
}
