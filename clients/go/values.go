// SPDX-License-Identifier: Apache-2.0

// Values: items, typed sets, and the conversion of answers to Go types by the model's schema.

package tabletheoryd

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
)

// Item is one item in the model's logical form, keyed by attribute name.
//
// Values you send: string, bool, nil, json.Number (or any Go integer/float;
// json.Number keeps every digit), []byte (B, sent as base64), StringSet,
// NumberSet, BinarySet, []any and map[string]any (L, M).
//
// Values you get back, for attributes the model declares: S string,
// N json.Number, B []byte, BOOL bool, NULL nil, SS StringSet, NS NumberSet,
// BS BinarySet, L []any, M map[string]any. Inside L and M, values are
// inferred from JSON: numbers are json.Number, strings are strings (the
// daemon sends a nested number that a double cannot carry as a decimal
// string, which then reads as a string; binary nested in L/M is a base64 string).
type Item map[string]any

// StringSet is a DynamoDB string set (SS).
type StringSet []string

// NumberSet is a DynamoDB number set (NS).
type NumberSet []json.Number

// BinarySet is a DynamoDB binary set (BS).
type BinarySet [][]byte

// Sorted returns the set sorted by code point.
func (s StringSet) Sorted() StringSet {
	out := append(StringSet(nil), s...)
	sort.Strings(out)
	return out
}

// Sorted returns the set sorted by numeric value.
func (s NumberSet) Sorted() NumberSet {
	out := append(NumberSet(nil), s...)
	sort.SliceStable(out, func(i, j int) bool { return CompareNumbers(out[i], out[j]) < 0 })
	return out
}

// CompareNumbers compares two decimal numbers exactly (-1, 0, 1); a number
// that does not parse compares as its text.
func CompareNumbers(a, b json.Number) int {
	x, okx := new(big.Rat).SetString(string(a))
	y, oky := new(big.Rat).SetString(string(b))
	if !okx || !oky {
		return strings.Compare(string(a), string(b))
	}
	return x.Cmp(y)
}

// String returns the attribute as a string ("" when absent or not a string).
func (it Item) String(name string) string { s, _ := it[name].(string); return s }

// Number returns the attribute as a json.Number ("" when absent).
func (it Item) Number(name string) json.Number {
	switch v := it[name].(type) {
	case json.Number:
		return v
	case string:
		return json.Number(v)
	}
	return ""
}

// Int64 returns a numeric attribute as int64 (0 when absent or not integral).
func (it Item) Int64(name string) int64 { n, _ := it.Number(name).Int64(); return n }

// Version is the item's version attribute "version" (0 when absent).
func (it Item) Version() int64 { return it.Int64("version") }

// ModelInfo is a model as the daemon describes it (GET /v1/models/{m}).
type ModelInfo struct {
	Name  string `json:"name"`
	Table struct {
		Name string `json:"name"`
	} `json:"table"`
	Keys struct {
		Partition KeyAttr  `json:"partition"`
		Sort      *KeyAttr `json:"sort,omitempty"`
	} `json:"keys"`
	Attributes []Attribute `json:"attributes"`
	// Raw is the whole normalized DMS model.
	Raw map[string]any `json:"-"`
}

// KeyAttr is a key attribute of a model or index.
type KeyAttr struct {
	Attribute string `json:"attribute"`
	Type      string `json:"type"`
}

// Attribute is one declared attribute.
type Attribute struct {
	Attribute string   `json:"attribute"`
	Type      string   `json:"type"`
	Roles     []string `json:"roles,omitempty"`
	Optional  bool     `json:"optional,omitempty"`
	Required  bool     `json:"required,omitempty"`
	JSON      bool     `json:"json,omitempty"`
}

func (m *ModelInfo) typeOf(name string) string {
	for _, a := range m.Attributes {
		if a.Attribute == name {
			if a.JSON && a.Type == "S" {
				return "" // a JSON document stored as a string: inferred
			}
			return a.Type
		}
	}
	return ""
}

// role returns the attribute holding a role ("version", "created_at", ...).
func (m *ModelInfo) role(role string) string {
	for _, a := range m.Attributes {
		for _, r := range a.Roles {
			if r == role {
				return a.Attribute
			}
		}
	}
	return ""
}

// typed converts an answer's item to Go types by the model's declared types.
func (m *ModelInfo) typed(raw map[string]any) (Item, error) {
	if raw == nil {
		return nil, nil
	}
	it := Item(raw)
	for k, v := range raw {
		if v == nil {
			continue
		}
		t, err := convert(m.typeOf(k), v)
		if err != nil {
			return nil, fmt.Errorf("tabletheoryd: attribute %q: %w", k, err)
		}
		it[k] = t
	}
	return it, nil
}

func convert(typ string, v any) (any, error) {
	switch typ {
	case "N":
		switch n := v.(type) {
		case string:
			return json.Number(n), nil
		case json.Number:
			return n, nil
		}
	case "B":
		if s, ok := v.(string); ok {
			return base64.StdEncoding.DecodeString(s)
		}
	case "SS", "NS", "BS":
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("a set that is not an array")
		}
		switch typ {
		case "SS":
			out := make(StringSet, 0, len(list))
			for _, e := range list {
				s, _ := e.(string)
				out = append(out, s)
			}
			return out, nil
		case "NS":
			out := make(NumberSet, 0, len(list))
			for _, e := range list {
				switch n := e.(type) {
				case string:
					out = append(out, json.Number(n))
				case json.Number:
					out = append(out, n)
				}
			}
			return out, nil
		default:
			out := make(BinarySet, 0, len(list))
			for _, e := range list {
				s, _ := e.(string)
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					return nil, err
				}
				out = append(out, b)
			}
			return out, nil
		}
	}
	return v, nil
}

// keyText is a key value as a path segment's text: S as is, N as decimal
// text, B as base64url.
func keyText(v any) (string, error) {
	switch k := v.(type) {
	case string:
		return k, nil
	case json.Number:
		return string(k), nil
	case []byte:
		return base64.URLEncoding.EncodeToString(k), nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(k), nil
	case float64:
		return strconv.FormatFloat(k, 'f', -1, 64), nil
	case float32:
		return strconv.FormatFloat(float64(k), 'f', -1, 32), nil
	}
	return "", fmt.Errorf("tabletheoryd: a key value of type %T", v)
}
