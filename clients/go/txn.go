// SPDX-License-Identifier: Apache-2.0

// Transactions: a builder for POST /v1/transactions/write and TransactGet.

package tabletheoryd

import (
	"context"
	"time"
)

// Tx collects the items of one write transaction (at most 100).
type Tx struct {
	ClientToken    string // sent as client_token; generated when empty, so retries are safe
	RetryConflicts bool
	items          []txItem
}

type txItem struct {
	op, model string
	item      Item
	key       *Key
	update    *Update
	cond      Cond
	version   *int64
}

// NewTx starts an empty transaction.
func NewTx() *Tx { return &Tx{} }

// Create adds a create (the key must not exist).
func (t *Tx) Create(model string, item Item) *Tx {
	t.items = append(t.items, txItem{op: "create", model: model, item: item})
	return t
}

// Put adds a create-or-replace; expectedVersion (optional) makes it conditional.
func (t *Tx) Put(model string, item Item, expectedVersion ...int64) *Tx {
	ti := txItem{op: "put", model: model, item: item}
	if len(expectedVersion) > 0 {
		ti.version = &expectedVersion[0]
	}
	t.items = append(t.items, ti)
	return t
}

// Update adds an update of the item at key (the item must exist unless u upserts).
func (t *Tx) Update(model string, key Key, u *Update) *Tx {
	t.items = append(t.items, txItem{op: "update", model: model, key: &key, update: u})
	return t
}

// Delete adds a delete; expectedVersion (optional) makes it conditional.
func (t *Tx) Delete(model string, key Key, expectedVersion ...int64) *Tx {
	ti := txItem{op: "delete", model: model, key: &key}
	if len(expectedVersion) > 0 {
		ti.version = &expectedVersion[0]
	}
	t.items = append(t.items, ti)
	return t
}

// Check adds a condition on an item that is not written.
func (t *Tx) Check(model string, key Key, c Cond) *Tx {
	t.items = append(t.items, txItem{op: "check", model: model, key: &key, cond: c})
	return t
}

// If adds a condition to the last item added.
func (t *Tx) If(c Cond) *Tx {
	if n := len(t.items); n > 0 {
		t.items[n-1].cond = c
	}
	return t
}

// TransactWrite writes every item of t, all or nothing. A canceled
// transaction is an *Error with Code "TransactionCanceled" and Reasons().
// Because it always carries a client_token, it is retried like an idempotent call.
func (c *Client) TransactWrite(ctx context.Context, t *Tx) error {
	if t.ClientToken == "" {
		t.ClientToken = newID()
	}
	items := make([]map[string]any, 0, len(t.items))
	for _, ti := range t.items {
		o := map[string]any{"op": ti.op, "model": ti.model}
		if ti.update != nil {
			for k, v := range ti.update.fields() {
				o[k] = v
			}
		}
		if ti.item != nil {
			o["item"] = ti.item
		}
		if ti.key != nil {
			info, err := c.schema(ctx, ti.model)
			if err != nil {
				return err
			}
			o["key"] = keyObject(info, *ti.key)
		}
		if ti.cond != nil {
			o["condition"] = ti.cond
		}
		if ti.version != nil {
			o["expected_version"] = *ti.version
		}
		items = append(items, o)
	}
	body := map[string]any{"client_token": t.ClientToken, "items": items}
	if t.RetryConflicts {
		body["retry_conflicts"] = true
	}
	_, err := c.call(ctx, request{method: "POST", path: "/v1/transactions/write", body: body, class: idempotent}, nil)
	return err
}

// TxGet names one item of a TransactGet.
type TxGet struct {
	Model  string
	Key    Key
	Select []string
}

// TransactGet reads up to 100 items at one point in time; a missing item is nil.
func (c *Client) TransactGet(ctx context.Context, gets []TxGet) ([]Item, error) {
	items := make([]map[string]any, 0, len(gets))
	infos := make([]*ModelInfo, len(gets))
	for i, g := range gets {
		info, err := c.schema(ctx, g.Model)
		if err != nil {
			return nil, err
		}
		infos[i] = info
		o := map[string]any{"model": g.Model, "key": keyObject(info, g.Key)}
		if len(g.Select) > 0 {
			o["select"] = g.Select
		}
		items = append(items, o)
	}
	var out struct {
		Items []map[string]any `json:"items"`
	}
	if _, err := c.call(ctx, request{method: "POST", path: "/v1/transactions/get", body: map[string]any{"items": items}, class: idempotent}, &out); err != nil {
		return nil, err
	}
	res := make([]Item, len(out.Items))
	for i, raw := range out.Items {
		if raw == nil || i >= len(infos) {
			continue
		}
		it, err := infos[i].typed(raw)
		if err != nil {
			return nil, err
		}
		res[i] = it
	}
	return res, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
