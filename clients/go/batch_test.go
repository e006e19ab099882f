// SPDX-License-Identifier: Apache-2.0

// BatchWrite resends exactly the requests that a BatchIncomplete answer names.

package tabletheoryd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// recorder passes requests through and calls after() on every answer.
type recorder struct {
	next  http.RoundTripper
	mu    sync.Mutex
	sent  [][]byte
	after func(*http.Response)
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && strings.HasSuffix(req.URL.Path, "/batch-write") {
		b, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(b))
		r.mu.Lock()
		r.sent = append(r.sent, b)
		r.mu.Unlock()
	}
	resp, err := r.next.RoundTrip(req)
	if err == nil && r.after != nil {
		r.after(resp)
	}
	return resp, err
}

func TestBatchWriteResendsOnlyTheUnprocessed(t *testing.T) {
	// A daemon with a short deadline, so that a batch whose last item is never
	// processed answers BatchIncomplete quickly.
	d, err := startDaemon("--enable-fault-injection", "--request-timeout-ms", "1500")
	if err != nil {
		t.Fatal(err)
	}
	defer d.stop()
	fault := func(method string, body string) {
		req, _ := http.NewRequest(method, d.URL+"/v1/_faults", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}
	rec := &recorder{next: http.DefaultTransport}
	rec.after = func(resp *http.Response) {
		if resp.StatusCode == 503 {
			fault("DELETE", "") // the backend recovers before the client resends
		}
	}
	c, err := New(Config{URL: d.URL, HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Every BatchWriteItem call leaves its last item unprocessed.
	fault("POST", `{"op":"BatchWriteItem","model":"Thing","error":"Unprocessed","unprocessed":1,"times":100000}`)
	var puts []Item
	for i := 0; i < 30; i++ {
		puts = append(puts, Item{"PK": "bw", "SK": fmt.Sprintf("%02d", i)})
	}
	n, err := c.Model("Thing").BatchWrite(ctx, puts, []Key{K("bw", "x1"), K("bw", "x2")})
	if err != nil || n != 32 {
		t.Fatalf("batch write: %d %v", n, err)
	}
	if len(rec.sent) != 2 {
		t.Fatalf("%d batch-write calls, want 2", len(rec.sent))
	}
	var second struct {
		Put    []map[string]any `json:"put"`
		Delete []map[string]any `json:"delete"`
	}
	if err := json.Unmarshal(rec.sent[1], &second); err != nil {
		t.Fatal(err)
	}
	// Chunk 0 (puts 0-24) never wrote put[24]; chunk 1 (puts 25-29, deletes 0-1) never delete[1].
	if len(second.Put) != 1 || second.Put[0]["SK"] != "24" || len(second.Delete) != 1 || second.Delete[0]["SK"] != "x2" {
		t.Fatalf("resent %s", rec.sent[1])
	}
	res, err := c.Model("Thing").BatchGet(ctx, []Key{K("bw", "24"), K("bw", "29")}, Consistent())
	if err != nil || len(res.Items) != 2 {
		t.Fatalf("written items: %v %v", res, err)
	}
}
