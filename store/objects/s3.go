package objects

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config says where an S3 store keeps its objects.
type S3Config struct {
	// Endpoint is host[:port], without a scheme.
	Endpoint  string
	AccessKey string
	SecretKey string
	Bucket    string
	// Location is the bucket's region ("us-east-1" when empty).
	Location string
	// BasePath is prepended to every key ("lfs/", "packages/"): several
	// kinds may share one bucket.
	BasePath string
	UseSSL   bool
}

// S3PartSize is the size of each part of a multipart upload: the client
// buffers one part at a time, so it bounds a put's memory. Objects smaller
// than one part are sent in a single request.
const S3PartSize = 16 << 20

// S3 keeps objects in a bucket of an S3-compatible service under a base
// path. A put is one PutObject (multipart above S3PartSize): the service
// makes the object visible only once it is complete, so a failed or short
// put leaves nothing.
type S3 struct {
	client *minio.Client
	bucket string
	base   string
}

// NewS3 connects to the service and creates the bucket when it is missing.
func NewS3(ctx context.Context, c S3Config) (*S3, error) {
	client, err := minio.New(c.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(c.AccessKey, c.SecretKey, ""),
		Secure: c.UseSSL,
		Region: c.Location,
	})
	if err != nil {
		return nil, fmt.Errorf("objects: s3 %s: %w", c.Endpoint, err)
	}
	base := strings.Trim(c.BasePath, "/")
	if base != "" {
		base += "/"
	}
	s := &S3{client: client, bucket: c.Bucket, base: base}
	ok, err := client.BucketExists(ctx, c.Bucket)
	if err != nil {
		return nil, fmt.Errorf("objects: s3 bucket %s: %w", c.Bucket, err)
	}
	if !ok {
		err := client.MakeBucket(ctx, c.Bucket, minio.MakeBucketOptions{Region: c.Location})
		if err != nil {
			// Another process may have made it meanwhile.
			if exists, err2 := client.BucketExists(ctx, c.Bucket); err2 != nil || !exists {
				return nil, fmt.Errorf("objects: s3 make bucket %s: %w", c.Bucket, err)
			}
		}
	}
	return s, nil
}

func (s *S3) name(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	return s.base + key, nil
}

// notExist makes the service's "no such key" an fs.ErrNotExist.
func notExist(key string, err error) error {
	if err == nil {
		return nil
	}
	resp := minio.ToErrorResponse(err)
	if resp.StatusCode == http.StatusNotFound || resp.Code == "NoSuchKey" || resp.Code == "NoSuchBucket" {
		return fmt.Errorf("%s: %w", key, fs.ErrNotExist)
	}
	return err
}

// countingReader counts what it has read.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	name, err := s.name(key)
	if err != nil {
		return err
	}
	// The reader is cut at size+1 bytes: one more than promised means the
	// content is longer, and the put is refused before it completes.
	cr := &countingReader{r: io.LimitReader(r, size+1)}
	body := &strictReader{c: cr, size: size}
	_, err = s.client.PutObject(ctx, s.bucket, name, body, size, minio.PutObjectOptions{
		PartSize:    S3PartSize,
		ContentType: "application/octet-stream",
	})
	if err != nil && body.short != nil {
		return body.short // the client may not pass the reader's error on as it was
	}
	return err
}

// strictReader fails the put when the content ends before size bytes or
// goes on after them, so the service never completes a wrong object. The
// check for more comes as soon as the last promised byte is read: the
// client may never ask for more than size bytes.
type strictReader struct {
	c       *countingReader
	size    int64
	checked bool
	// short is the ErrShort this reader failed with, if any.
	short error
}

func (s *strictReader) Read(p []byte) (int, error) {
	n, err := s.read(p)
	if errors.Is(err, ErrShort) {
		s.short = err
	}
	return n, err
}

func (s *strictReader) read(p []byte) (int, error) {
	if s.c.n >= s.size {
		if err := s.checkEnd(); err != nil {
			return 0, err
		}
		return 0, io.EOF
	}
	if remaining := s.size - s.c.n; int64(len(p)) > remaining {
		p = p[:remaining]
	}
	n, err := s.c.Read(p)
	if errors.Is(err, io.EOF) {
		if s.c.n < s.size {
			return 0, fmt.Errorf("%w: %d bytes, want %d", ErrShort, s.c.n, s.size)
		}
		err = nil
	}
	if err == nil && s.c.n == s.size {
		// The bytes completing the object are held back when more
		// follow: a caller reading "at least n" (io.ReadFull) would
		// otherwise drop the error along with them.
		if cerr := s.checkEnd(); cerr != nil {
			return 0, cerr
		}
	}
	return n, err
}

// checkEnd looks one byte past the promised size.
func (s *strictReader) checkEnd() error {
	if s.checked {
		return nil
	}
	var one [1]byte
	n, err := io.ReadFull(s.c, one[:])
	if n > 0 {
		return fmt.Errorf("%w: more than %d bytes", ErrShort, s.size)
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	s.checked = true
	return nil
}

// s3Object is minio's object (seekable, reading by ranges) with the size
// and time its first stat found.
type s3Object struct {
	*minio.Object
	size int64
	mod  time.Time
}

func (o s3Object) Size() int64        { return o.size }
func (o s3Object) ModTime() time.Time { return o.mod }

func (s *S3) Open(ctx context.Context, key string) (Object, error) {
	name, err := s.name(key)
	if err != nil {
		return nil, err
	}
	o, err := s.client.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	if err != nil {
		return nil, notExist(key, err)
	}
	st, err := o.Stat()
	if err != nil {
		o.Close()
		return nil, notExist(key, err)
	}
	return s3Object{Object: o, size: st.Size, mod: st.LastModified}, nil
}

func (s *S3) Stat(ctx context.Context, key string) (int64, error) {
	name, err := s.name(key)
	if err != nil {
		return 0, err
	}
	st, err := s.client.StatObject(ctx, s.bucket, name, minio.StatObjectOptions{})
	if err != nil {
		return 0, notExist(key, err)
	}
	return st.Size, nil
}

func (s *S3) Delete(ctx context.Context, key string) error {
	name, err := s.name(key)
	if err != nil {
		return err
	}
	err = s.client.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{})
	if err != nil && !errors.Is(notExist(key, err), fs.ErrNotExist) {
		return err
	}
	return nil
}

func (s *S3) Walk(ctx context.Context, prefix string, fn func(key string, size int64, modified time.Time) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing when fn stops the walk
	for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.base + prefix, Recursive: true}) {
		if o.Err != nil {
			return o.Err
		}
		key := strings.TrimPrefix(o.Key, s.base)
		if key == "" || strings.HasSuffix(key, "/") {
			continue // a directory marker some services list
		}
		if err := fn(key, o.Size, o.LastModified); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// URL is a presigned GET that serves the object as an attachment named
// name.
func (s *S3) URL(ctx context.Context, key, name string, ttl time.Duration) (string, error) {
	obj, err := s.name(key)
	if err != nil {
		return "", err
	}
	q := url.Values{}
	if name != "" {
		q.Set("response-content-disposition", `attachment; filename="`+quoteName(path.Base(name))+`"`)
	}
	u, err := s.client.PresignedGetObject(ctx, s.bucket, obj, ttl, q)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// quoteName escapes a file name for a quoted header parameter.
func quoteName(name string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r", "", "\n", "").Replace(name)
}
