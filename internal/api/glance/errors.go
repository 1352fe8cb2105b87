package glance

import (
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"strings"

	"hangar/internal/auth"
	"hangar/internal/catalog"
	"hangar/internal/storage"
)

// Error is an API error with Glance's status and message.
type Error struct {
	Status  int
	Message string
	Header  http.Header // extra headers, e.g. Accept-Patch on 415
}

func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

func errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// titles are webob's status titles where they differ from Go's.
var titles = map[int]string{
	http.StatusRequestedRangeNotSatisfiable: "Request Range Not Satisfiable",
	http.StatusRequestEntityTooLarge:        "Request Entity Too Large",
}

func title(status int) string {
	if t, ok := titles[status]; ok {
		return t
	}
	return http.StatusText(status)
}

// classify is the one place that maps errors to an HTTP status and a message
// safe to show the client.
func classify(err error) *Error {
	var e *Error
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &mbe):
		return errorf(http.StatusRequestEntityTooLarge, "Image exceeds the size limit of %d bytes.", mbe.Limit)
	case errors.Is(err, auth.ErrUnauthenticated):
		return errorf(http.StatusUnauthorized, "This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.")
	case errors.Is(err, catalog.ErrNotFound), errors.Is(err, storage.ErrNotFound):
		return errorf(http.StatusNotFound, "The resource could not be found.")
	case errors.Is(err, catalog.ErrExists), errors.Is(err, catalog.ErrConflict), errors.Is(err, storage.ErrExists):
		return errorf(http.StatusConflict, "The request conflicts with the current state of the resource.")
	case errors.Is(err, storage.ErrUnavailable):
		return errorf(http.StatusServiceUnavailable, "The image store is unavailable; nothing was changed. Please try again later.")
	}
	return errorf(http.StatusInternalServerError, "The server has either erred or is incapable of performing the requested operation.")
}

// writeError answers with Glance's error body: JSON when the client accepts
// JSON, otherwise webob's HTML page.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	e := classify(err)
	if e.Status >= 500 {
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	for k, vs := range e.Header {
		w.Header()[k] = vs
	}
	code := fmt.Sprintf("%d %s", e.Status, title(e.Status))
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		body, _ := marshal(map[string]string{
			"message": e.Message + "<br /><br />\n\n\n",
			"code":    code,
			"title":   title(e.Status),
		})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(e.Status)
		w.Write(body)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	w.WriteHeader(e.Status)
	fmt.Fprintf(w, "<html>\n <head>\n  <title>%s</title>\n </head>\n <body>\n  <h1>%s</h1>\n  %s<br /><br />\n\n\n\n </body>\n</html>",
		code, code, html.EscapeString(e.Message))
}
