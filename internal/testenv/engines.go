package testenv

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Engine returns the value of env, which scripts/test.sh sets when it has
// started the engine a test needs. Without it the test skips in a
// developer's quick run, and says so, and fails under CI=true.
func Engine(t testing.TB, env, what string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		msg := env + " is not set: scripts/test.sh (as root) starts " + what
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPED in a quick run: " + msg)
	}
	return v
}

// PostgresDB creates an empty database on the PostgreSQL server
// scripts/test.sh started, drops it after the test, and returns its DSN.
func PostgresDB(t testing.TB) string {
	t.Helper()
	dsn := Engine(t, "HANGAR_TEST_POSTGRES", "PostgreSQL")
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	name := "hangar_test_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec("DROP DATABASE " + name + " WITH (FORCE)") })
	return dsn + " dbname=" + name // the last keyword wins
}

// S3 is the Ceph RGW scripts/test.sh started.
type S3 struct{ Endpoint, AccessKey, SecretKey string }

// S3Endpoint returns the S3 gateway for tests.
func S3Endpoint(t testing.TB) S3 {
	t.Helper()
	f := strings.Fields(Engine(t, "HANGAR_TEST_S3", "Ceph RGW"))
	if len(f) != 3 {
		t.Fatalf("HANGAR_TEST_S3 is %q, want ENDPOINT ACCESS_KEY SECRET_KEY", f)
	}
	return S3{f[0], f[1], f[2]}
}

// S3Bucket creates a bucket for one test and empties and removes it after.
func S3Bucket(t testing.TB) (S3, string) {
	t.Helper()
	s := S3Endpoint(t)
	cl, err := minio.New(strings.TrimPrefix(s.Endpoint, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := "hangar-" + uuid.NewString()[:13]
	if err := cl.MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for o := range cl.ListObjects(ctx, name, minio.ListObjectsOptions{Recursive: true}) {
			cl.RemoveObject(ctx, name, o.Key, minio.RemoveObjectOptions{})
		}
		cl.RemoveBucket(ctx, name)
	})
	return s, name
}
