// SPDX-License-Identifier: Apache-2.0

// Package tabletheoryd is the Go client of the tabletheoryd HTTP API: models,
// items, queries, batches, transactions and the job ledger, with exact numbers
// (json.Number), typed sets and binary, one error code per sentinel, retries of
// retryable errors, and X-Request-Id propagation.
package tabletheoryd

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultURL is the daemon's default listen address.
const DefaultURL = "http://127.0.0.1:8737"

// Config configures a Client. The zero value talks to DefaultURL.
type Config struct {
	// URL of the daemon: "http://host:port" or "unix:/path/to.sock".
	URL string
	// Token is sent as "Authorization: Bearer <token>" on /v1 requests.
	Token string
	// TokenFile is read (and trimmed) when Token is empty.
	TokenFile string
	// AttemptTimeout bounds one HTTP attempt (default 30 s); the whole call,
	// retries included, is bounded by the caller's context.
	AttemptTimeout time.Duration
	// MaxAttempts per call, first one included (default 4; 1 disables retries).
	MaxAttempts int
	// RetryBaseDelay and RetryMaxDelay shape the jittered exponential backoff
	// (defaults 50 ms and 2 s).
	RetryBaseDelay, RetryMaxDelay time.Duration
	// HTTPClient replaces the client's own pooled client (then URL's unix:
	// form is the caller's business).
	HTTPClient *http.Client
}

// Client talks to one daemon. It is safe for concurrent use and keeps its
// connections alive between calls: create one and share it.
type Client struct {
	base     string
	token    string
	http     *http.Client
	attempt  time.Duration
	attempts int
	baseDly  time.Duration
	maxDly   time.Duration

	mu     sync.Mutex
	models map[string]*ModelInfo
}

// ConfigFromEnv reads TABLETHEORYD_URL and TABLETHEORYD_TOKEN_FILE.
func ConfigFromEnv() Config {
	return Config{URL: os.Getenv("TABLETHEORYD_URL"), TokenFile: os.Getenv("TABLETHEORYD_TOKEN_FILE")}
}

// NewFromEnv is New(ConfigFromEnv()).
func NewFromEnv() (*Client, error) { return New(ConfigFromEnv()) }

// New makes a Client.
func New(cfg Config) (*Client, error) {
	c := &Client{attempt: cfg.AttemptTimeout, attempts: cfg.MaxAttempts,
		baseDly: cfg.RetryBaseDelay, maxDly: cfg.RetryMaxDelay, models: map[string]*ModelInfo{}}
	if c.attempt <= 0 {
		c.attempt = 30 * time.Second
	}
	if c.attempts <= 0 {
		c.attempts = 4
	}
	if c.baseDly <= 0 {
		c.baseDly = 50 * time.Millisecond
	}
	if c.maxDly <= 0 {
		c.maxDly = 2 * time.Second
	}
	raw := cfg.URL
	if raw == "" {
		raw = DefaultURL
	}
	transport := &http.Transport{
		Proxy:               nil, // a localhost sidecar: never through a proxy
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if path, ok := strings.CutPrefix(raw, "unix:"); ok {
		transport.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", path)
		}
		c.base = "http://tabletheoryd"
	} else {
		if !strings.Contains(raw, "://") {
			raw = "http://" + raw
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("tabletheoryd: bad URL %q", raw)
		}
		transport.DialContext = dialer.DialContext
		c.base = strings.TrimRight(u.String(), "/")
	}
	c.http = cfg.HTTPClient
	if c.http == nil {
		c.http = &http.Client{Transport: transport}
	}
	c.token = cfg.Token
	if c.token == "" && cfg.TokenFile != "" {
		b, err := os.ReadFile(cfg.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("tabletheoryd: token file: %w", err)
		}
		c.token = strings.TrimSpace(string(b))
	}
	return c, nil
}

// Close drops the idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

type ctxKey struct{}

// WithRequestID returns a context whose calls send X-Request-Id: id (1-128
// characters of A-Z a-z 0-9 . _ : -). Without one, each call sends a fresh
// random id, the same for all of its retries.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// RequestIDFrom returns the id set by WithRequestID, if any.
func RequestIDFrom(ctx context.Context) string {
	s, _ := ctx.Value(ctxKey{}).(string)
	return s
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// retry classes of a request.
type retryClass int

const (
	// notIdempotent: retried only when the daemon surely did not run it
	// (Draining: refused before routing; Throttled: DynamoDB refused it).
	notIdempotent retryClass = iota
	// idempotent: any retryable error and connection failures are retried.
	idempotent
)

type request struct {
	method string
	path   string // already escaped
	query  url.Values
	body   any
	header http.Header
	class  retryClass
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do runs one call with its retries and returns the 2xx answer, or an *Error,
// or a transport/context error. Once ctx is done, the error wraps ctx.Err()
// too (errors.Is(err, context.DeadlineExceeded) holds after the caller's
// deadline, whatever the daemon or the transport answered meanwhile).
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	resp, err := c.doAttempts(ctx, r)
	if err != nil {
		if cerr := ctxDone(ctx); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("tabletheoryd: %w (%w)", cerr, err)
		}
	}
	return resp, err
}

// ctxDone is ctx.Err(), or DeadlineExceeded once the deadline has passed even
// if the context's timer has not fired yet (an answer that arrived at the
// deadline, such as the daemon's own 504).
func ctxDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *Client) doAttempts(ctx context.Context, r request) (*response, error) {
	var payload []byte
	if r.body != nil {
		var err error
		if payload, err = json.Marshal(r.body); err != nil {
			return nil, fmt.Errorf("tabletheoryd: encoding the request: %w", err)
		}
	}
	u := c.base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	rid := RequestIDFrom(ctx)
	if rid == "" {
		rid = newID()
	}
	var last error
	for attempt := 1; ; attempt++ {
		resp, err := c.once(ctx, r, u, payload, rid)
		if err == nil {
			return resp, nil
		}
		last = err
		if attempt >= c.attempts || !c.shouldRetry(ctx, r, err) {
			return nil, last
		}
		delay := c.backoff(attempt)
		var te *Error
		if errors.As(err, &te) && te.RetryAfter > delay {
			delay = te.RetryAfter
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, last
		case <-t.C:
		}
	}
}

func (c *Client) once(ctx context.Context, r request, u string, payload []byte, rid string) (*response, error) {
	actx, cancel := context.WithTimeout(ctx, c.attempt)
	defer cancel()
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, r.method, u, body)
	if err != nil {
		return nil, err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Request-Id", rid)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	hr, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(hr.Body)
	hr.Body.Close()
	if err != nil {
		return nil, err
	}
	if hr.StatusCode >= 200 && hr.StatusCode < 300 {
		return &response{status: hr.StatusCode, header: hr.Header, body: data}, nil
	}
	return nil, parseError(hr, data, rid)
}

func parseError(hr *http.Response, data []byte, rid string) error {
	e := &Error{Status: hr.StatusCode, RequestID: hr.Header.Get("X-Request-Id")}
	if e.RequestID == "" {
		e.RequestID = rid
	}
	var env struct {
		Error struct {
			Code      string         `json:"code"`
			Message   string         `json:"message"`
			Retryable bool           `json:"retryable"`
			Details   map[string]any `json:"details"`
		} `json:"error"`
		RequestID string `json:"request_id"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&env) == nil && env.Error.Code != "" {
		e.Code, e.Message, e.Retryable, e.Details = env.Error.Code, env.Error.Message, env.Error.Retryable, env.Error.Details
		if env.RequestID != "" {
			e.RequestID = env.RequestID
		}
	} else {
		e.Code = ErrUnexpectedResponse.Code
		e.Message = fmt.Sprintf("HTTP %d without the daemon's error envelope", hr.StatusCode)
		e.Retryable = hr.StatusCode == 429 || hr.StatusCode == 502 || hr.StatusCode == 503 || hr.StatusCode == 504
	}
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	if ra := hr.Header.Get("Retry-After"); ra != "" {
		if s, err := strconv.Atoi(ra); err == nil && s >= 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		}
	}
	return e
}

func (c *Client) shouldRetry(ctx context.Context, r request, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var te *Error
	if errors.As(err, &te) {
		if te.Code == ErrDraining.Code || te.Code == ErrThrottled.Code {
			return true
		}
		if te.Code == ErrBatchIncomplete.Code && strings.HasSuffix(r.path, "/batch-write") {
			return false // BatchWrite resends only details.unprocessed itself
		}
		return r.class == idempotent && te.Retryable
	}
	// A connection failure: the request may or may not have reached the daemon.
	return r.class == idempotent
}

// backoff is "full jitter": a random delay up to base*2^(attempt-1), capped.
func (c *Client) backoff(attempt int) time.Duration {
	ceil := c.baseDly << (attempt - 1)
	if ceil > c.maxDly || ceil <= 0 {
		ceil = c.maxDly
	}
	n, err := rand.Int(rand.Reader, big.NewInt(int64(ceil)+1))
	if err != nil {
		return ceil
	}
	return time.Duration(n.Int64())
}

// decode parses a JSON answer keeping numbers exact.
func decode(data []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("tabletheoryd: decoding the answer: %w", err)
	}
	return nil
}

// call is do plus decode into out (when out is not nil and there is a body).
func (c *Client) call(ctx context.Context, r request, out any) (*response, error) {
	resp, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	if out != nil && len(resp.body) > 0 {
		if err := decode(resp.body, out); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// seg percent-encodes one path segment: everything but RFC 3986's unreserved
// characters, so that '/', '#', '%', '+' and the rest survive any server.
func seg(s string) string {
	const hexd = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' ||
			ch == '-' || ch == '.' || ch == '_' || ch == '~' {
			b.WriteByte(ch)
		} else {
			b.WriteByte('%')
			b.WriteByte(hexd[ch>>4])
			b.WriteByte(hexd[ch&15])
		}
	}
	return b.String()
}

// Healthy calls GET /healthz.
func (c *Client) Healthy(ctx context.Context) error {
	_, err := c.call(ctx, request{method: "GET", path: "/healthz", class: idempotent}, nil)
	return err
}

// Ready calls GET /readyz: nil when the daemon is ready for traffic.
func (c *Client) Ready(ctx context.Context) error {
	_, err := c.call(ctx, request{method: "GET", path: "/readyz", class: notIdempotent}, nil)
	return err
}
