// SPDX-License-Identifier: Apache-2.0

// A call whose context expires returns an error that errors.Is
// context.DeadlineExceeded, whatever the daemon answered meanwhile.

package tabletheoryd

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestDeadlineWhileTheDaemonWorks(t *testing.T) {
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	// The daemon's test endpoint holds the answer for 5 s; the deadline is 100 ms.
	_, err := c.call(ctx, request{method: "POST", path: "/v1/_test/sleep",
		body: map[string]any{"ops": 1, "ms": 5000}, class: idempotent}, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want context.DeadlineExceeded, got %v", err)
	}
}

func TestDeadlineDuringABackoffKeepsTheAnswer(t *testing.T) {
	// The daemon answers 503 Throttled with Retry-After: 1; the caller's
	// deadline expires during the wait before the second attempt.
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(503)
		_, _ = w.Write([]byte(`{"error":{"code":"Throttled","message":"slow down","retryable":true},"request_id":"r"}`))
	}))
	defer srv.Close()
	c, err := New(Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err = c.Models(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want context.DeadlineExceeded, got %v", err)
	}
	if !errors.Is(err, ErrThrottled) {
		t.Fatalf("the daemon's answer is lost: %v", err)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d attempts, want 1", n)
	}
}

// uncancelable sends a request whatever its context says, as a transport
// that sees the caller's deadline only after the answer came.
type uncancelable struct{ rt http.RoundTripper }

func (u uncancelable) RoundTrip(r *http.Request) (*http.Response, error) {
	return u.rt.RoundTrip(r.WithContext(context.WithoutCancel(r.Context())))
}

func TestDeadlineAnsweredAsAnHTTPError(t *testing.T) {
	// The daemon answers 504 BackendTimeout once the caller's deadline has
	// passed, and the transport hands that answer over: the error still says
	// the deadline expired.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-ctx.Done() // the caller's deadline has passed
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(504)
		_, _ = w.Write([]byte(`{"error":{"code":"BackendTimeout","message":"deadline","retryable":true},"request_id":"r"}`))
	}))
	defer srv.Close()
	c, err := New(Config{URL: srv.URL, MaxAttempts: 1,
		HTTPClient: &http.Client{Transport: uncancelable{srv.Client().Transport}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Models(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want context.DeadlineExceeded, got %v", err)
	}
	if !errors.Is(err, ErrBackendTimeout) {
		t.Fatalf("the daemon's answer is lost: %v", err)
	}
}
