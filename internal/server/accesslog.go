package server

import (
	"io"
	"log/slog"
	"net/http"
	"time"
)

// accessLog logs one line per request. Its ResponseWriter forwards ReadFrom
// so downloads keep going out by sendfile.
func accessLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rw := &responseWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rw, r)
		log.Info("request", "method", r.Method, "path", r.URL.Path, "status", rw.status,
			"bytes", rw.bytes, "ms", float64(time.Since(start).Microseconds())/1000, "remote", r.RemoteAddr)
	})
}

// responseWriter records status and body size.
type responseWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *responseWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// ReadFrom hands the reader to the real ResponseWriter untouched: for a
// *os.File that is the sendfile(2) path. Bytes are counted from the return.
func (w *responseWriter) ReadFrom(src io.Reader) (int64, error) {
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		n, err := rf.ReadFrom(src)
		w.bytes += n
		return n, err
	}
	n, err := io.Copy(struct{ io.Writer }{w.ResponseWriter}, src)
	w.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush forwards streaming flushes.
func (w *responseWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
