// Package s3store keeps images in an S3 bucket (Ceph RGW, MinIO, AWS;
// path-style addressing). Whole-image uploads stream into a multipart
// upload; reads are ranged GETs. Random-access transfers are staged in a
// local partial file and sent at commit as parallel parts. Downloads that
// want a file (the sendfile path) go through a bounded local read-through
// cache (cache.go); active images never change, so cached copies never go
// stale.
package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"hangar/internal/storage"
	"hangar/internal/storage/localfs"
)

// Config says where the bucket is and where the local parts live.
type Config struct {
	// URL is s3://BUCKET/PREFIX?endpoint=http://HOST:PORT&region=R, and
	// optionally &staging=/PATH: where transfers are staged (default
	// LocalDir/staging; servers that share a transfer need PATH on a
	// shared mount), and &create_bucket=true to create a missing bucket
	// (Glance's s3_store_create_bucket_on_put).
	URL string
	// AccessKey and SecretKey; empty: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
	AccessKey, SecretKey string
	// LocalDir holds the staging area of transfers and the read cache.
	LocalDir string
	// CacheBytes bounds the read cache (default 10 GiB).
	CacheBytes int64
	// PartSize of multipart uploads (default 64 MiB), Threads sending parts
	// of a committed transfer at once (default 4).
	PartSize uint64
	Threads  uint
}

// Store is the S3 store.
type Store struct {
	cl     *minio.Client
	bucket string
	prefix string
	cfg    Config
	stage  *localfs.Store
	cache  *cache
}

// New connects to the bucket (which must exist) and opens the local parts.
func New(ctx context.Context, cfg Config) (*Store, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("s3 store: want s3://BUCKET/PREFIX?endpoint=…, not %q", cfg.URL)
	}
	ep, err := url.Parse(u.Query().Get("endpoint"))
	if err != nil || ep.Host == "" {
		return nil, fmt.Errorf("s3 store: %q needs endpoint=http(s)://HOST:PORT", cfg.URL)
	}
	if cfg.AccessKey == "" {
		cfg.AccessKey, cfg.SecretKey = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = 10 << 30
	}
	if cfg.PartSize == 0 {
		cfg.PartSize = 64 << 20
	}
	if cfg.Threads == 0 {
		cfg.Threads = 4
	}
	region := u.Query().Get("region")
	if region == "" {
		region = "us-east-1"
	}
	cl, err := minio.New(ep.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure:       ep.Scheme == "https",
		Region:       region,
		BucketLookup: minio.BucketLookupPath,
		// The retry wrapper (package retry) decides; one try here.
		MaxRetries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 store: %w", err)
	}
	s := &Store{cl: cl, bucket: u.Host, prefix: strings.Trim(u.Path, "/"), cfg: cfg}
	if ok, err := cl.BucketExists(ctx, s.bucket); err != nil {
		return nil, fmt.Errorf("s3 store: bucket %s: %w", s.bucket, translate(err))
	} else if !ok && u.Query().Get("create_bucket") == "true" {
		if err := cl.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: region}); err != nil {
			return nil, fmt.Errorf("s3 store: create bucket %s: %w", s.bucket, translate(err))
		}
	} else if !ok {
		return nil, fmt.Errorf("s3 store: bucket %s does not exist (add create_bucket=true to create it)", s.bucket)
	}
	staging := path.Join(cfg.LocalDir, "staging")
	if st := u.Query().Get("staging"); st != "" {
		staging = st
	}
	if s.stage, err = localfs.New(ctx, localfs.Config{Root: staging}); err != nil {
		return nil, err
	}
	if s.cache, err = newCache(path.Join(cfg.LocalDir, "cache"), cfg.CacheBytes, s.fetch); err != nil {
		return nil, err
	}
	return s, nil
}

var (
	_ storage.Store        = (*Store)(nil)
	_ storage.FileOpener   = (*Store)(nil)
	_ storage.PartialStore = (*Store)(nil)
)

func (s *Store) key(name string) (string, error) {
	if !storage.ValidName(name) {
		return "", fmt.Errorf("%q: %w", name, storage.ErrInvalidName)
	}
	if s.prefix == "" {
		return name, nil
	}
	return s.prefix + "/" + name, nil
}

// translate maps S3 and network errors to the storage sentinels.
func translate(err error) error {
	if err == nil {
		return nil
	}
	resp := minio.ToErrorResponse(err)
	switch {
	case resp.Code == "NoSuchKey" || resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%w: %v", storage.ErrNotFound, err)
	case resp.StatusCode == http.StatusPreconditionFailed:
		return fmt.Errorf("%w: %v", storage.ErrExists, err)
	case resp.StatusCode >= 500:
		return fmt.Errorf("%w: %v", storage.ErrUnavailable, err)
	}
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &ne) || errors.As(err, &oe) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "connection reset") {
		return fmt.Errorf("%w: %v", storage.ErrUnavailable, err)
	}
	return err
}

// Stat implements storage.Store.
func (s *Store) Stat(ctx context.Context, name string) (storage.Info, error) {
	k, err := s.key(name)
	if err != nil {
		return storage.Info{}, err
	}
	st, err := s.cl.StatObject(ctx, s.bucket, k, minio.StatObjectOptions{})
	if err != nil {
		return storage.Info{}, translate(err)
	}
	return storage.Info{Name: name, Size: st.Size}, nil
}

// Open implements storage.Store: reads are ranged GETs.
func (s *Store) Open(ctx context.Context, name string) (storage.Reader, error) {
	k, err := s.key(name)
	if err != nil {
		return nil, err
	}
	obj, err := s.cl.GetObject(ctx, s.bucket, k, minio.GetObjectOptions{})
	if err != nil {
		return nil, translate(err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		return nil, translate(err)
	}
	return &reader{Object: obj, size: st.Size}, nil
}

type reader struct {
	*minio.Object
	size int64
}

func (r *reader) Size() int64 { return r.size }

// Delete implements storage.Store.
func (s *Store) Delete(ctx context.Context, name string) error {
	if _, err := s.Stat(ctx, name); err != nil {
		return err
	}
	k, _ := s.key(name)
	if err := s.cl.RemoveObject(ctx, s.bucket, k, minio.RemoveObjectOptions{}); err != nil {
		return translate(err)
	}
	s.cache.drop(name)
	return nil
}

// List implements storage.Store.
func (s *Store) List(ctx context.Context, fn func(storage.Info) error) error {
	pfx := ""
	if s.prefix != "" {
		pfx = s.prefix + "/"
	}
	for o := range s.cl.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: pfx, Recursive: false}) {
		if o.Err != nil {
			return translate(o.Err)
		}
		name := strings.TrimPrefix(o.Key, pfx)
		if !storage.ValidName(name) {
			continue
		}
		if err := fn(storage.Info{Name: name, Size: o.Size}); err != nil {
			return err
		}
	}
	return nil
}

// Create implements storage.Store: the bytes stream into a multipart upload
// that completes on Close, conditional on the name not existing (If-None-
// Match: *), so two writers of one name cannot both win.
func (s *Store) Create(ctx context.Context, name string) (storage.Writer, error) {
	k, err := s.key(name)
	if err != nil {
		return nil, err
	}
	if _, err := s.Stat(ctx, name); err == nil {
		return nil, fmt.Errorf("%s: %w", name, storage.ErrExists)
	} else if !errors.Is(err, storage.ErrNotFound) {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	w := &writer{pw: pw, cancel: cancel, done: make(chan error, 1)}
	go func() {
		_, err := s.cl.PutObject(ctx, s.bucket, k, pr, -1, s.putOptions())
		err = translate(err)
		pr.CloseWithError(err)
		w.done <- err
	}()
	return w, nil
}

func (s *Store) putOptions() minio.PutObjectOptions {
	o := minio.PutObjectOptions{PartSize: s.cfg.PartSize, NumThreads: s.cfg.Threads,
		ContentType: "application/octet-stream", DisableContentSha256: true}
	o.SetMatchETagExcept("*")
	return o
}

type writer struct {
	pw     *io.PipeWriter
	cancel context.CancelFunc
	done   chan error
	ended  bool
}

func (w *writer) Write(p []byte) (int, error) { return w.pw.Write(p) }

// Close completes the upload; after Abort it does nothing.
func (w *writer) Close() error {
	if w.ended {
		return nil
	}
	w.ended = true
	w.pw.Close()
	err := <-w.done
	w.cancel()
	return err
}

// Abort cancels the upload (PutObject aborts its multipart upload).
func (w *writer) Abort() error {
	if w.ended {
		return nil
	}
	w.ended = true
	w.cancel()
	w.pw.CloseWithError(context.Canceled)
	<-w.done
	return nil
}

// OpenPartial implements storage.PartialStore: staged on local disk.
func (s *Store) OpenPartial(ctx context.Context, name string, size int64) (storage.Partial, error) {
	return s.stage.OpenPartial(ctx, name, size)
}

// RemovePartial implements storage.PartialStore.
func (s *Store) RemovePartial(ctx context.Context, name string) error {
	return s.stage.RemovePartial(ctx, name)
}

// CommitPartial sends the staged file as parallel parts, conditional on
// the name being new, then removes the staged copy.
func (s *Store) CommitPartial(ctx context.Context, name string) error {
	k, err := s.key(name)
	if err != nil {
		return err
	}
	f, err := s.stage.OpenPartialFile(name)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if _, err := s.cl.PutObject(ctx, s.bucket, k, f, fi.Size(), s.putOptions()); err != nil {
		return translate(err)
	}
	return s.stage.RemovePartial(ctx, name)
}

// OpenFile implements storage.FileOpener through the read cache.
func (s *Store) OpenFile(ctx context.Context, name string) (*os.File, error) {
	if _, err := s.key(name); err != nil {
		return nil, err
	}
	return s.cache.open(ctx, name)
}

// fetch copies an object into a local file for the cache.
func (s *Store) fetch(ctx context.Context, name string, dst *os.File) error {
	r, err := s.Open(ctx, name)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(dst, r)
	return translate(err)
}
