package e2e

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// s3Env is the Ceph RGW scripts/test.sh started: "ENDPOINT ACCESS SECRET".
func s3Env(t *testing.T) []string {
	t.Helper()
	f := strings.Fields(os.Getenv("HANGAR_TEST_S3"))
	if len(f) != 3 {
		if os.Getenv("CI") != "" {
			t.Fatal("HANGAR_TEST_S3 is not set: scripts/test.sh starts Ceph RGW")
		}
		t.Skip("SKIPPED in a quick run: no S3 endpoint (scripts/test.sh starts Ceph RGW as root)")
	}
	// The servers this test starts read their credentials from the
	// environment, as an operator's would.
	t.Setenv("AWS_ACCESS_KEY_ID", f[1])
	t.Setenv("AWS_SECRET_ACCESS_KEY", f[2])
	return f
}

func s3Endpoint(t *testing.T) string { return s3Env(t)[0] }

// s3Bucket makes a bucket for one test and removes it with its objects.
func s3Bucket(t *testing.T) string {
	t.Helper()
	f := s3Env(t)
	cl, err := minio.New(strings.TrimPrefix(f[0], "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(f[1], f[2], ""), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := "e2e-" + uuid.NewString()[:13]
	if err := cl.MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for o := range cl.ListObjects(ctx, name, minio.ListObjectsOptions{Recursive: true}) {
			cl.RemoveObject(ctx, name, o.Key, minio.RemoveObjectOptions{})
		}
		cl.RemoveBucket(ctx, name)
	})
	return name
}
