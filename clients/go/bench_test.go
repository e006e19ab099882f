// SPDX-License-Identifier: Apache-2.0

// Per-call overhead of the Go client against raw net/http: GET of one item on the memory daemon.

package tabletheoryd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// Both benchmarks do the same work per call: one GET on a kept-alive
// connection and a JSON decode of the answer with exact numbers. Run with
//
//	go test -run '^$' -bench Get -benchtime 20000x
func benchItem(b *testing.B) {
	b.Helper()
	c, err := New(Config{URL: shared.URL})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Model("Thing").Put(context.Background(), Item{"PK": "bench", "SK": "one", "n": 1, "note": "x"}); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkGetClient(b *testing.B) {
	benchItem(b)
	c, _ := New(Config{URL: shared.URL})
	things := c.Model("Thing")
	ctx := context.Background()
	key := K("bench", "one")
	if _, err := things.Get(ctx, key); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := things.Get(ctx, key); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetRawHTTP(b *testing.B) {
	benchItem(b)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	url := shared.URL + "/v1/models/Thing/items/bench/one"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := hc.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatal(err, resp.StatusCode)
		}
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			b.Fatal(err)
		}
	}
}
