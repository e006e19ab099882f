// SPDX-License-Identifier: Apache-2.0

// Conditions, query, scan and count with cursor-following iterators, batches and transactions.

package tabletheoryd

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"sort"
	"strconv"
)

// Cond is one condition of the daemon's condition language (docs/api.md "Conditions").
type Cond map[string]any

// C is the comparison {"attr": attr, "op": op, "value": v}; op is one of
// = <> < <= > >= begins_with contains not_contains type.
func C(attr, op string, v any) Cond { return Cond{"attr": attr, "op": op, "value": v} }

// Eq is C(attr, "=", v).
func Eq(attr string, v any) Cond { return C(attr, "=", v) }

// Between is lo <= attr <= hi.
func Between(attr string, lo, hi any) Cond { return C(attr, "between", []any{lo, hi}) }

// BeginsWith is a prefix test.
func BeginsWith(attr, prefix string) Cond { return C(attr, "begins_with", prefix) }

// In is attr equal to one of vs (at most 100).
func In(attr string, vs ...any) Cond { return C(attr, "in", vs) }

// Exists is attribute_exists(attr).
func Exists(attr string) Cond { return Cond{"attr": attr, "op": "exists"} }

// NotExists is attribute_not_exists(attr).
func NotExists(attr string) Cond { return Cond{"attr": attr, "op": "not_exists"} }

// Size compares size(attr) with n.
func Size(attr, op string, n int64) Cond { return Cond{"attr": attr, "size": op, "value": n} }

// And is all of cs.
func And(cs ...Cond) Cond { return Cond{"and": cs} }

// Or is any of cs.
func Or(cs ...Cond) Cond { return Cond{"or": cs} }

// Not negates c.
func Not(c Cond) Cond { return Cond{"not": c} }

// Query is the body of POST .../query. Key holds the partition equality and
// at most one sort-key condition.
type Query struct {
	Index      string   `json:"index,omitempty"`
	Key        []Cond   `json:"key"`
	Filter     Cond     `json:"filter,omitempty"`
	Select     []string `json:"select,omitempty"`
	Limit      int      `json:"limit,omitempty"`
	Order      string   `json:"order,omitempty"` // "asc" | "desc"
	Consistent bool     `json:"consistent,omitempty"`
	Cursor     string   `json:"cursor,omitempty"`
	Count      bool     `json:"count,omitempty"`
}

// Scan is the body of POST .../scan.
type Scan struct {
	Filter     Cond     `json:"filter,omitempty"`
	Select     []string `json:"select,omitempty"`
	Limit      int      `json:"limit,omitempty"`
	Consistent bool     `json:"consistent,omitempty"`
	Cursor     string   `json:"cursor,omitempty"`
	Segments   int      `json:"segments,omitempty"`
	Count      bool     `json:"count,omitempty"`
}

// Page is one answer of query or scan. Cursor is "" on the last page.
type Page struct {
	Items        []Item
	Count        int64
	ScannedCount int64
	Cursor       string
}

type pageJSON struct {
	Items        []map[string]any `json:"items"`
	Count        int64            `json:"count"`
	ScannedCount int64            `json:"scanned_count"`
	Cursor       *string          `json:"cursor"`
}

func (m *Model) page(ctx context.Context, op string, body any) (*Page, error) {
	info, err := m.c.schema(ctx, m.name)
	if err != nil {
		return nil, err
	}
	var pj pageJSON
	if _, err := m.c.call(ctx, request{method: "POST", path: m.path() + "/" + op, body: body, class: idempotent}, &pj); err != nil {
		return nil, err
	}
	p := &Page{Count: pj.Count, ScannedCount: pj.ScannedCount, Items: make([]Item, 0, len(pj.Items))}
	if pj.Cursor != nil {
		p.Cursor = *pj.Cursor
	}
	for _, raw := range pj.Items {
		it, err := info.typed(raw)
		if err != nil {
			return nil, err
		}
		p.Items = append(p.Items, it)
	}
	return p, nil
}

// Query reads one page.
func (m *Model) Query(ctx context.Context, q Query) (*Page, error) { return m.page(ctx, "query", q) }

// Scan reads one page.
func (m *Model) Scan(ctx context.Context, s Scan) (*Page, error) { return m.page(ctx, "scan", s) }

// all iterates over every item of a query or scan, following cursors; limit
// then sizes each page. The iteration stops at the first error, which it yields.
func all(ctx context.Context, next func(cursor string) (*Page, error), cursor string) iter.Seq2[Item, error] {
	return func(yield func(Item, error) bool) {
		for {
			p, err := next(cursor)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, it := range p.Items {
				if !yield(it, nil) {
					return
				}
			}
			if p.Cursor == "" {
				return
			}
			cursor = p.Cursor
		}
	}
}

// QueryAll iterates over every matching item, page after page:
//
//	for it, err := range users.QueryAll(ctx, q) { ... }
func (m *Model) QueryAll(ctx context.Context, q Query) iter.Seq2[Item, error] {
	return all(ctx, func(cur string) (*Page, error) { q.Cursor = cur; return m.Query(ctx, q) }, q.Cursor)
}

// ScanAll iterates over every item of a scan, page after page.
func (m *Model) ScanAll(ctx context.Context, s Scan) iter.Seq2[Item, error] {
	return all(ctx, func(cur string) (*Page, error) { s.Cursor = cur; return m.Scan(ctx, s) }, s.Cursor)
}

func countAll(next func(cursor string) (*Page, error), cursor string) (int64, error) {
	var n int64
	for {
		p, err := next(cursor)
		if err != nil {
			return 0, err
		}
		n += p.Count
		if p.Cursor == "" {
			return n, nil
		}
		cursor = p.Cursor
	}
}

// Count counts the items matching q, over all pages. q.Limit is not sent:
// without one the daemon counts every page in one call.
func (m *Model) Count(ctx context.Context, q Query) (int64, error) {
	q.Count, q.Limit = true, 0
	return countAll(func(cur string) (*Page, error) { q.Cursor = cur; return m.Query(ctx, q) }, q.Cursor)
}

// ScanCount counts the items a scan matches, over all pages (s.Limit is ignored, as in Count).
func (m *Model) ScanCount(ctx context.Context, s Scan) (int64, error) {
	s.Count, s.Limit = true, 0
	return countAll(func(cur string) (*Page, error) { s.Cursor = cur; return m.Scan(ctx, s) }, s.Cursor)
}

// BatchGetResult holds the found items in the order of the keys, and the
// keys that have no item.
type BatchGetResult struct {
	Items   []Item
	Missing []Item
}

// BatchGet reads up to 10,000 items by key. Options: Select, Consistent.
func (m *Model) BatchGet(ctx context.Context, keys []Key, opts ...Option) (*BatchGetResult, error) {
	info, err := m.c.schema(ctx, m.name)
	if err != nil {
		return nil, err
	}
	o := collect(opts)
	objs := make([]map[string]any, len(keys))
	for i, k := range keys {
		objs[i] = keyObject(info, k)
	}
	body := map[string]any{"keys": objs}
	if len(o.sel) > 0 {
		body["select"] = o.sel
	}
	if o.consistent {
		body["consistent"] = true
	}
	var out struct {
		Items   []map[string]any `json:"items"`
		Missing []map[string]any `json:"missing"`
	}
	if _, err := m.c.call(ctx, request{method: "POST", path: m.path() + "/batch-get", body: body, class: idempotent}, &out); err != nil {
		return nil, err
	}
	res := &BatchGetResult{}
	for _, raw := range out.Items {
		it, err := info.typed(raw)
		if err != nil {
			return nil, err
		}
		res.Items = append(res.Items, it)
	}
	for _, raw := range out.Missing {
		it, err := info.typed(raw)
		if err != nil {
			return nil, err
		}
		res.Missing = append(res.Missing, it)
	}
	return res, nil
}

// BatchWrite puts and deletes up to 10,000 items and returns how many were
// processed. When the daemon answers BatchIncomplete, exactly the unprocessed
// requests are sent again (puts and deletes can be repeated), within the
// client's attempts; the last BatchIncomplete is returned if work is still left.
func (m *Model) BatchWrite(ctx context.Context, puts []Item, deletes []Key) (int, error) {
	info, err := m.c.schema(ctx, m.name)
	if err != nil {
		return 0, err
	}
	dels := make([]map[string]any, len(deletes))
	for i, k := range deletes {
		dels[i] = keyObject(info, k)
	}
	done := 0
	for attempt := 1; ; attempt++ {
		body := map[string]any{"put": nonNil(puts), "delete": nonNilK(dels)}
		var out struct {
			Processed int `json:"processed"`
		}
		_, err := m.c.call(ctx, request{method: "POST", path: m.path() + "/batch-write", body: body, class: idempotent}, &out)
		if err == nil {
			return done + out.Processed, nil
		}
		var te *Error
		if !errors.As(err, &te) || te.Code != ErrBatchIncomplete.Code || attempt >= m.c.attempts {
			return done, err
		}
		un, _ := te.Details["unprocessed"].(map[string]any)
		pi, di := indexes(un["put"]), indexes(un["delete"])
		done += len(puts) + len(dels) - len(pi) - len(di)
		puts, dels = pick(puts, pi), pick(dels, di)
		if err := sleepCtx(ctx, m.c.backoff(attempt)); err != nil {
			return done, te
		}
	}
}

func nonNil(l []Item) []Item {
	if l == nil {
		return []Item{}
	}
	return l
}

func nonNilK(l []map[string]any) []map[string]any {
	if l == nil {
		return []map[string]any{}
	}
	return l
}

func indexes(v any) []int {
	list, _ := v.([]any)
	out := make([]int, 0, len(list))
	for _, e := range list {
		if n, ok := e.(json.Number); ok {
			if i, err := strconv.Atoi(string(n)); err == nil {
				out = append(out, i)
			}
		}
	}
	sort.Ints(out)
	return out
}

func pick[T any](l []T, idx []int) []T {
	out := make([]T, 0, len(idx))
	for _, i := range idx {
		if i >= 0 && i < len(l) {
			out = append(out, l[i])
		}
	}
	return out
}
