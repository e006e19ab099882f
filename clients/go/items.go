// SPDX-License-Identifier: Apache-2.0

// Models, tables and items: the /v1/models endpoints.

package tabletheoryd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Models lists the registered models (GET /v1/models).
func (c *Client) Models(ctx context.Context) ([]*ModelInfo, error) {
	var out struct {
		Models []json.RawMessage `json:"models"`
	}
	if _, err := c.call(ctx, request{method: "GET", path: "/v1/models", class: idempotent}, &out); err != nil {
		return nil, err
	}
	list := make([]*ModelInfo, 0, len(out.Models))
	for _, raw := range out.Models {
		m, err := parseModel(raw)
		if err != nil {
			return nil, err
		}
		list = append(list, m)
	}
	return list, nil
}

func parseModel(raw []byte) (*ModelInfo, error) {
	m := &ModelInfo{}
	if err := decode(raw, m); err != nil {
		return nil, err
	}
	if err := decode(raw, &m.Raw); err != nil {
		return nil, err
	}
	return m, nil
}

// DescribeModel reads one model (GET /v1/models/{m}); ErrModelNotFound if unknown.
func (c *Client) DescribeModel(ctx context.Context, name string) (*ModelInfo, error) {
	resp, err := c.call(ctx, request{method: "GET", path: "/v1/models/" + seg(name), class: idempotent}, nil)
	if err != nil {
		return nil, err
	}
	m, err := parseModel(resp.body)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.models[name] = m
	c.mu.Unlock()
	return m, nil
}

// PutModel registers a DMS model (PUT /v1/models/{m}); created is true on 201.
// With replace, a different model of that name is replaced instead of
// answering ErrAlreadyExists.
func (c *Client) PutModel(ctx context.Context, name string, model any, replace bool) (created bool, err error) {
	var q url.Values
	if replace {
		q = url.Values{"replace": {"true"}}
	}
	resp, err := c.call(ctx, request{method: "PUT", path: "/v1/models/" + seg(name), query: q, body: model, class: idempotent}, nil)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	delete(c.models, name)
	c.mu.Unlock()
	return resp.status == http.StatusCreated, nil
}

// schema returns the cached model description, reading it once.
func (c *Client) schema(ctx context.Context, name string) (*ModelInfo, error) {
	c.mu.Lock()
	m := c.models[name]
	c.mu.Unlock()
	if m != nil {
		return m, nil
	}
	return c.DescribeModel(ctx, name)
}

// Model is a handle on one model's endpoints. It is cheap; make as many as you like.
type Model struct {
	c    *Client
	name string
}

// Model returns the handle of the model called name.
func (c *Client) Model(name string) *Model { return &Model{c: c, name: name} }

// Name is the model's name.
func (m *Model) Name() string { return m.name }

func (m *Model) path() string { return "/v1/models/" + seg(m.name) }

// Describe is Client.DescribeModel of this model.
func (m *Model) Describe(ctx context.Context) (*ModelInfo, error) {
	return m.c.DescribeModel(ctx, m.name)
}

// TableInfo is the answer of the table endpoints.
type TableInfo struct {
	Table     string           `json:"table"`
	Status    string           `json:"status"`
	ItemCount json.Number      `json:"item_count"`
	Indexes   []map[string]any `json:"indexes"`
	// Created is true when EnsureTable created it (201).
	Created bool `json:"-"`
}

// EnsureTable creates the model's table, indexes and TTL if missing (PUT .../table).
func (m *Model) EnsureTable(ctx context.Context) (*TableInfo, error) {
	var out TableInfo
	resp, err := m.c.call(ctx, request{method: "PUT", path: m.path() + "/table", class: idempotent}, &out)
	if err != nil {
		return nil, err
	}
	out.Created = resp.status == http.StatusCreated
	return &out, nil
}

// Table describes the model's table (GET .../table).
func (m *Model) Table(ctx context.Context) (*TableInfo, error) {
	var out TableInfo
	_, err := m.c.call(ctx, request{method: "GET", path: m.path() + "/table", class: idempotent}, &out)
	return &out, err
}

// DeleteTable deletes the model's table (only with --allow-table-delete, else ErrForbidden).
func (m *Model) DeleteTable(ctx context.Context) error {
	_, err := m.c.call(ctx, request{method: "DELETE", path: m.path() + "/table", class: notIdempotent}, nil)
	return err
}

// Key is an item's key: the partition key value and, for a composite key, the
// sort key value (string, json.Number or an integer, []byte).
type Key struct {
	Partition any
	Sort      any
}

// K makes a Key: K(pk) or K(pk, sk).
func K(partition any, sort ...any) Key {
	k := Key{Partition: partition}
	if len(sort) > 0 {
		k.Sort = sort[0]
	}
	return k
}

func (m *Model) itemPath(info *ModelInfo, k Key) (string, error) {
	pk, err := keyText(k.Partition)
	if err != nil {
		return "", err
	}
	p := m.path() + "/items/" + seg(pk)
	if info.Keys.Sort != nil {
		if k.Sort == nil {
			return "", fmt.Errorf("tabletheoryd: model %s needs a sort key value", m.name)
		}
		sk, err := keyText(k.Sort)
		if err != nil {
			return "", err
		}
		p += "/" + seg(sk)
	} else if k.Sort != nil {
		return "", fmt.Errorf("tabletheoryd: model %s has no sort key", m.name)
	}
	return p, nil
}

// keyObject is the key as a JSON object {pk-attr: v, sk-attr: v}.
func keyObject(info *ModelInfo, k Key) map[string]any {
	o := map[string]any{info.Keys.Partition.Attribute: keyJSON(k.Partition)}
	if info.Keys.Sort != nil {
		o[info.Keys.Sort.Attribute] = keyJSON(k.Sort)
	}
	return o
}

func keyJSON(v any) any { return v } // []byte marshals as base64, numbers as numbers

// keyOf takes the key out of an item.
func keyOf(info *ModelInfo, it Item) Key {
	k := Key{Partition: it[info.Keys.Partition.Attribute]}
	if info.Keys.Sort != nil {
		k.Sort = it[info.Keys.Sort.Attribute]
	}
	return k
}

// Option tunes one call: Select, Consistent, IfMatch, IfNoneMatch.
type Option func(*options)

type options struct {
	sel         []string
	consistent  bool
	ifMatch     *int64
	ifNoneMatch bool
}

// Select returns only these attribute paths.
func Select(paths ...string) Option { return func(o *options) { o.sel = paths } }

// Consistent asks for a strongly consistent read.
func Consistent() Option { return func(o *options) { o.consistent = true } }

// IfMatch makes a put or delete conditional on the item's current version.
func IfMatch(version int64) Option { return func(o *options) { o.ifMatch = &version } }

// IfNoneMatch makes a put create-only (If-None-Match: *).
func IfNoneMatch() Option { return func(o *options) { o.ifNoneMatch = true } }

func collect(opts []Option) options {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o
}

func (o options) headers() http.Header {
	h := http.Header{}
	if o.ifMatch != nil {
		h.Set("If-Match", `"`+strconv.FormatInt(*o.ifMatch, 10)+`"`)
	}
	if o.ifNoneMatch {
		h.Set("If-None-Match", "*")
	}
	return h
}

func (m *Model) itemAnswer(info *ModelInfo, resp *response) (Item, error) {
	var raw map[string]any
	if err := decode(resp.body, &raw); err != nil {
		return nil, err
	}
	return info.typed(raw)
}

// Create writes a new item (POST .../items); ErrConditionFailed if the key exists.
// Not retried after an ambiguous failure: a retry could find its own item.
func (m *Model) Create(ctx context.Context, item Item) (Item, error) {
	info, err := m.c.schema(ctx, m.name)
	if err != nil {
		return nil, err
	}
	resp, err := m.c.do(ctx, request{method: "POST", path: m.path() + "/items", body: item, class: notIdempotent})
	if err != nil {
		return nil, err
	}
	return m.itemAnswer(info, resp)
}

// Put creates or replaces an item (PUT .../items/{key}). IfNoneMatch() makes it
// create-only, IfMatch(v) replace-only at version v. A plain put is retried
// (writing the same item again is harmless); a conditional one is not.
func (m *Model) Put(ctx context.Context, item Item, opts ...Option) (Item, error) {
	info, err := m.c.schema(ctx, m.name)
	if err != nil {
		return nil, err
	}
	p, err := m.itemPath(info, keyOf(info, item))
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	class := idempotent
	if o.ifMatch != nil || o.ifNoneMatch {
		class = notIdempotent
	}
	resp, err := m.c.do(ctx, request{method: "PUT", path: p, body: item, header: o.headers(), class: class})
	if err != nil {
		return nil, err
	}
	return m.itemAnswer(info, resp)
}

// Get reads an item; ErrItemNotFound when absent. Options: Select, Consistent.
func (m *Model) Get(ctx context.Context, key Key, opts ...Option) (Item, error) {
	info, err := m.c.schema(ctx, m.name)
	if err != nil {
		return nil, err
	}
	p, err := m.itemPath(info, key)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	q := url.Values{}
	if len(o.sel) > 0 {
		q.Set("select", joinComma(o.sel))
	}
	if o.consistent {
		q.Set("consistent", "true")
	}
	resp, err := m.c.do(ctx, request{method: "GET", path: p, query: q, class: idempotent})
	if err != nil {
		return nil, err
	}
	return m.itemAnswer(info, resp)
}

func joinComma(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ","
		}
		out += v
	}
	return out
}

// Patch updates an item (PATCH .../items/{key}) and returns the new item;
// ErrItemNotFound if absent (unless the update upserts). Not retried after an
// ambiguous failure (add/append are not idempotent).
func (m *Model) Patch(ctx context.Context, key Key, u *Update) (Item, error) {
	info, err := m.c.schema(ctx, m.name)
	if err != nil {
		return nil, err
	}
	p, err := m.itemPath(info, key)
	if err != nil {
		return nil, err
	}
	resp, err := m.c.do(ctx, request{method: "PATCH", path: p, body: u, class: notIdempotent})
	if err != nil {
		return nil, err
	}
	return m.itemAnswer(info, resp)
}

// UpdateFields is the TableTheory form of an update: it writes fields (none
// given: every non-key attribute present) from item, whose key attributes name
// the item; a version in item is the expected version (ErrVersionConflict
// otherwise). Not retried after an ambiguous failure.
func (m *Model) UpdateFields(ctx context.Context, item Item, fields ...string) (Item, error) {
	info, err := m.c.schema(ctx, m.name)
	if err != nil {
		return nil, err
	}
	p, err := m.itemPath(info, keyOf(info, item))
	if err != nil {
		return nil, err
	}
	body := map[string]any{"item": item}
	if len(fields) > 0 {
		body["fields"] = fields
	}
	resp, err := m.c.do(ctx, request{method: "PATCH", path: p, body: body, class: notIdempotent})
	if err != nil {
		return nil, err
	}
	return m.itemAnswer(info, resp)
}

// Delete deletes an item; ErrItemNotFound if absent. IfMatch(v) makes it conditional.
func (m *Model) Delete(ctx context.Context, key Key, opts ...Option) error {
	info, err := m.c.schema(ctx, m.name)
	if err != nil {
		return err
	}
	p, err := m.itemPath(info, key)
	if err != nil {
		return err
	}
	o := collect(opts)
	_, err = m.c.do(ctx, request{method: "DELETE", path: p, header: o.headers(), class: notIdempotent})
	return err
}

// Update is an update in the operator form; build it with NewUpdate().
type Update struct {
	body map[string]any
}

// NewUpdate starts an empty update.
func NewUpdate() *Update { return &Update{body: map[string]any{}} }

func (u *Update) member(op, attr string, v any) *Update {
	m, _ := u.body[op].(map[string]any)
	if m == nil {
		m = map[string]any{}
		u.body[op] = m
	}
	m[attr] = v
	return u
}

// Set sets attr (a path such as "a.b[0]") to v.
func (u *Update) Set(attr string, v any) *Update { return u.member("set", attr, v) }

// SetIfNotExists sets attr to v only when it has no value.
func (u *Update) SetIfNotExists(attr string, v any) *Update {
	return u.member("set_if_not_exists", attr, v)
}

// Remove removes attributes.
func (u *Update) Remove(attrs ...string) *Update {
	l, _ := u.body["remove"].([]string)
	u.body["remove"] = append(l, attrs...)
	return u
}

// Add adds a number to attr, or elements (a set) to a set attribute.
func (u *Update) Add(attr string, v any) *Update { return u.member("add", attr, v) }

// Delete removes the elements of a set v from a set attribute.
func (u *Update) Delete(attr string, v any) *Update { return u.member("delete", attr, v) }

// Append appends the elements of the list v to a list attribute.
func (u *Update) Append(attr string, v []any) *Update { return u.member("append", attr, v) }

// Prepend puts the elements of the list v in front of a list attribute.
func (u *Update) Prepend(attr string, v []any) *Update { return u.member("prepend", attr, v) }

// If adds a condition (ANDed with the version check).
func (u *Update) If(c Cond) *Update { u.body["condition"] = c; return u }

// ExpectedVersion makes the update conditional on the item's version.
func (u *Update) ExpectedVersion(v int64) *Update { u.body["expected_version"] = v; return u }

// Upsert lets the update create a missing item.
func (u *Update) Upsert() *Update { u.body["upsert"] = true; return u }

// MarshalJSON sends the operator form.
func (u *Update) MarshalJSON() ([]byte, error) { return json.Marshal(u.body) }

// fields returns the update's members, for transactions.
func (u *Update) fields() map[string]any { return u.body }
