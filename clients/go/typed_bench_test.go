// SPDX-License-Identifier: Apache-2.0

package tabletheoryd

import (
	"context"
	"encoding/json"
	"testing"
)

// thing is testdata/models/things.yml as tools/typegen generates it.
type thing struct {
	PK        string         `json:"PK"`
	SK        string         `json:"SK"`
	Bins      BinarySet      `json:"bins,omitempty"`
	Blob      []byte         `json:"blob,omitempty"`
	Count     json.Number    `json:"count,omitempty"`
	CreatedAt *string        `json:"createdAt,omitempty"`
	Doc       map[string]any `json:"doc,omitempty"`
	Flag      *bool          `json:"flag,omitempty"`
	List      []any          `json:"list,omitempty"`
	N         json.Number    `json:"n,omitempty"`
	Note      *string        `json:"note,omitempty"`
	Nums      NumberSet      `json:"nums,omitempty"`
	Status    *string        `json:"status,omitempty"`
	Tags      StringSet      `json:"tags,omitempty"`
	UpdatedAt *string        `json:"updatedAt,omitempty"`
	Version   *int64         `json:"version,omitempty"`
}

type thingKey struct {
	PK string `json:"PK"`
	SK string `json:"SK"`
}

type thingPatch struct {
	Note *string `json:"note,omitempty"`
}

var thingModel = Spec[thing, thingKey, thingPatch]{
	Name:     "Thing",
	KeyNames: []string{"PK", "SK"},
	KeyParts: func(k *thingKey) []any { return []any{k.PK, k.SK} },
	KeyOf:    func(o *thing) thingKey { return thingKey{PK: o.PK, SK: o.SK} },
	ToWire:   func(o *thing) any { return o },
}

// BenchmarkGetTyped is BenchmarkGetClient through the typed layer (a struct
// instead of a map); compare it with BenchmarkGetRawHTTP:
//
//	go test -run '^$' -bench 'Get(Typed|RawHTTP|Client)$' -benchtime 20000x
func BenchmarkGetTyped(b *testing.B) {
	benchItem(b)
	c, _ := New(Config{URL: shared.URL})
	things := Bind(c, &thingModel)
	ctx := context.Background()
	key := thingKey{PK: "bench", SK: "one"}
	if it, err := things.Get(ctx, key); err != nil || it == nil || it.N != "1" {
		b.Fatal(it, err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := things.Get(ctx, key); err != nil {
			b.Fatal(err)
		}
	}
}
