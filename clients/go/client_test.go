// SPDX-License-Identifier: Apache-2.0

// Tests of the Go client against a real daemon on the memory backend.

package tabletheoryd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func newClient(t *testing.T) *Client {
	t.Helper()
	c, err := New(Config{URL: shared.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func uniq(t *testing.T) string {
	return fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
}

func TestItemRoundTripKeepsExactValues(t *testing.T) {
	c, ctx := newClient(t), ctxT(t)
	things := c.Model("Thing")
	pk := uniq(t) + "#a/b c%"
	blob := make([]byte, 256)
	for i := range blob {
		blob[i] = byte(i)
	}
	created, err := things.Create(ctx, Item{
		"PK": pk, "SK": "S/1",
		"n":     json.Number("12345678901234567890123456789012345678"),
		"tags":  StringSet{"b", "a"},
		"nums":  NumberSet{"0.12345678901234567890123456789012345678", "-1E-130", "3"},
		"bins":  BinarySet{{0, 1}, {0xff}},
		"blob":  blob,
		"flag":  false,
		"list":  []any{json.Number("1"), "two", map[string]any{"three": json.Number("3")}},
		"doc":   map[string]any{"k": "v", "deep": map[string]any{"x": []any{true, nil}}},
		"count": 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if created.Version() != 0 || created.String("createdAt") == "" {
		t.Fatalf("lifecycle fields: %v", created)
	}
	got, err := things.Get(ctx, K(pk, "S/1"), Consistent())
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := got["n"].(json.Number); !ok || n != "12345678901234567890123456789012345678" {
		t.Fatalf("n = %#v", got["n"])
	}
	if tags, ok := got["tags"].(StringSet); !ok || strings.Join(tags.Sorted(), ",") != "a,b" {
		t.Fatalf("tags = %#v", got["tags"])
	}
	nums, ok := got["nums"].(NumberSet)
	if !ok || len(nums) != 3 {
		t.Fatalf("nums = %#v", got["nums"])
	}
	sorted := nums.Sorted()
	if CompareNumbers(sorted[0], "-1E-130") != 0 || CompareNumbers(sorted[1], "0.12345678901234567890123456789012345678") != 0 || CompareNumbers(sorted[2], "3") != 0 {
		t.Fatalf("nums sorted = %v", sorted)
	}
	if b, ok := got["blob"].([]byte); !ok || !bytes.Equal(b, blob) {
		t.Fatalf("blob = %#v", got["blob"])
	}
	bins, ok := got["bins"].(BinarySet)
	if !ok || len(bins) != 2 {
		t.Fatalf("bins = %#v", got["bins"])
	}
	list := got["list"].([]any)
	if list[0] != json.Number("1") || list[1] != "two" || list[2].(map[string]any)["three"] != json.Number("3") {
		t.Fatalf("list = %#v", list)
	}
	if got["flag"] != false {
		t.Fatalf("flag = %#v", got["flag"])
	}
	// Select projects.
	sel, err := things.Get(ctx, K(pk, "S/1"), Select("n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, has := sel["blob"]; has || sel["n"] == nil {
		t.Fatalf("select: %v", sel)
	}
}

func TestPutConditionsAndErrors(t *testing.T) {
	c, ctx := newClient(t), ctxT(t)
	things := c.Model("Thing")
	pk := uniq(t)
	it, err := things.Put(ctx, Item{"PK": pk, "SK": "x", "note": "one"}, IfNoneMatch())
	if err != nil || it.Version() != 0 {
		t.Fatalf("put create-only: %v %v", it, err)
	}
	_, err = things.Put(ctx, Item{"PK": pk, "SK": "x", "note": "two"}, IfNoneMatch())
	if !errors.Is(err, ErrConditionFailed) {
		t.Fatalf("want ConditionFailed, got %v", err)
	}
	var te *Error
	if !errors.As(err, &te) || te.Status != 409 || te.Retryable || te.RequestID == "" {
		t.Fatalf("error fields: %#v", te)
	}
	_, err = things.Put(ctx, Item{"PK": pk, "SK": "x", "note": "two"}, IfMatch(5))
	if !errors.Is(err, ErrVersionConflict) || errors.Is(err, ErrConditionFailed) {
		t.Fatalf("want VersionConflict only, got %v", err)
	}
	it, err = things.Put(ctx, Item{"PK": pk, "SK": "x", "note": "two"}, IfMatch(0))
	if err != nil || it.Version() != 1 || it.String("note") != "two" {
		t.Fatalf("put at version 0: %v %v", it, err)
	}
	if err := things.Delete(ctx, K(pk, "x"), IfMatch(0)); !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("delete at a stale version: %v", err)
	}
	if err := things.Delete(ctx, K(pk, "x"), IfMatch(1)); err != nil {
		t.Fatal(err)
	}
	_, err = things.Get(ctx, K(pk, "x"))
	if !errors.Is(err, ErrItemNotFound) {
		t.Fatalf("want ItemNotFound, got %v", err)
	}
	_, err = things.Create(ctx, Item{"PK": pk, "SK": "y", "nope": 1})
	if !errors.As(err, &te) || te.Code != "ValidationError" || te.Field() == "" {
		t.Fatalf("want ValidationError naming a field, got %v", err)
	}
	_, err = c.Model("NoSuchModel").Get(ctx, K("a"))
	if !errors.Is(err, ErrModelNotFound) {
		t.Fatalf("want ModelNotFound, got %v", err)
	}
}

func TestPatchUpdateBuilder(t *testing.T) {
	c, ctx := newClient(t), ctxT(t)
	things := c.Model("Thing")
	pk := uniq(t)
	key := K(pk, "p")
	if _, err := things.Create(ctx, Item{"PK": pk, "SK": "p", "count": 1, "tags": StringSet{"a", "b"},
		"list": []any{"m"}, "note": "gone"}); err != nil {
		t.Fatal(err)
	}
	it, err := things.Patch(ctx, key, NewUpdate().
		Set("flag", true).
		SetIfNotExists("status", "new").
		Remove("note").
		Add("count", json.Number("41")).
		Delete("tags", StringSet{"a"}).
		Append("list", []any{"z"}).
		If(Exists("count")).
		ExpectedVersion(0))
	if err != nil {
		t.Fatal(err)
	}
	if it["flag"] != true || it.String("status") != "new" || it["note"] != nil || it.Number("count") != "42" {
		t.Fatalf("patched: %v", it)
	}
	if tags := it["tags"].(StringSet); len(tags) != 1 || tags[0] != "b" {
		t.Fatalf("tags: %v", tags)
	}
	if it.Version() != 1 {
		t.Fatalf("version %d", it.Version())
	}
	it, err = things.Patch(ctx, key, NewUpdate().Prepend("list", []any{"a"}))
	if err != nil {
		t.Fatal(err)
	}
	if l := it["list"].([]any); len(l) != 3 || l[0] != "a" || l[1] != "m" || l[2] != "z" {
		t.Fatalf("list: %v", l)
	}
	_, err = things.Patch(ctx, key, NewUpdate().Set("flag", false).ExpectedVersion(0))
	if !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("stale patch: %v", err)
	}
	_, err = things.Patch(ctx, key, NewUpdate().Set("flag", false).If(C("count", ">", 100)))
	if !errors.Is(err, ErrConditionFailed) {
		t.Fatalf("false condition: %v", err)
	}
	_, err = things.Patch(ctx, K(pk, "absent"), NewUpdate().Set("flag", true))
	if !errors.Is(err, ErrItemNotFound) {
		t.Fatalf("patch of an absent item: %v", err)
	}
	up, err := things.Patch(ctx, K(pk, "absent"), NewUpdate().Set("flag", true).Upsert())
	if err != nil || up["flag"] != true {
		t.Fatalf("upsert: %v %v", up, err)
	}
}

func TestUpdateFieldsWritesOnlyTheListedFields(t *testing.T) {
	c, ctx := newClient(t), ctxT(t)
	things := c.Model("Thing")
	pk := uniq(t)
	if _, err := things.Create(ctx, Item{"PK": pk, "SK": "a", "note": "x", "status": "s1"}); err != nil {
		t.Fatal(err)
	}
	it, err := things.UpdateFields(ctx, Item{"PK": pk, "SK": "a", "note": "y", "status": "s2", "version": 0}, "note")
	if err != nil {
		t.Fatal(err)
	}
	if it.String("note") != "y" || it.String("status") != "s1" || it.Version() != 1 {
		t.Fatalf("updated: %v", it)
	}
	_, err = things.UpdateFields(ctx, Item{"PK": pk, "SK": "a", "note": "z", "version": 0})
	if !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("stale version: %v", err)
	}
	it, err = things.UpdateFields(ctx, Item{"PK": pk, "SK": "a", "note": "z", "status": "s3"})
	if err != nil {
		t.Fatal(err)
	}
	if it.String("note") != "z" || it.String("status") != "s3" || it.Version() != 2 {
		t.Fatalf("every field: %v", it)
	}
}

func TestQueryScanIteratorsAndCounts(t *testing.T) {
	c, ctx := newClient(t), ctxT(t)
	things := c.Model("Thing")
	pk := uniq(t)
	status := "st-" + pk
	var puts []Item
	for i := 0; i < 25; i++ {
		puts = append(puts, Item{"PK": pk, "SK": fmt.Sprintf("%03d", i), "status": status, "n": i})
	}
	n, err := things.BatchWrite(ctx, puts, nil)
	if err != nil || n != 25 {
		t.Fatalf("batch write: %d %v", n, err)
	}
	q := Query{Key: []Cond{Eq("PK", pk)}, Limit: 4, Consistent: true}
	p, err := things.Query(ctx, q)
	if err != nil || len(p.Items) != 4 || p.Cursor == "" {
		t.Fatalf("first page: %v %v", p, err)
	}
	var sks []string
	for it, err := range things.QueryAll(ctx, q) {
		if err != nil {
			t.Fatal(err)
		}
		sks = append(sks, it.String("SK"))
	}
	if len(sks) != 25 || sks[0] != "000" || sks[24] != "024" {
		t.Fatalf("QueryAll: %v", sks)
	}
	desc := Query{Key: []Cond{Eq("PK", pk), BeginsWith("SK", "01")}, Order: "desc", Limit: 3}
	var got []string
	for it, err := range things.QueryAll(ctx, desc) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, it.String("SK"))
	}
	if strings.Join(got, ",") != "019,018,017,016,015,014,013,012,011,010" {
		t.Fatalf("desc begins_with: %v", got)
	}
	cnt, err := things.Count(ctx, Query{Key: []Cond{Eq("PK", pk)}, Filter: C("n", ">=", 20)})
	if err != nil || cnt != 5 {
		t.Fatalf("count: %d %v", cnt, err)
	}
	// The GSI, chosen by its key.
	cnt, err = things.Count(ctx, Query{Key: []Cond{Eq("status", status)}})
	if err != nil || cnt != 25 {
		t.Fatalf("gsi count: %d %v", cnt, err)
	}
	seen := map[string]bool{}
	for it, err := range things.ScanAll(ctx, Scan{Filter: Eq("PK", pk), Limit: 7, Segments: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		seen[it.String("SK")] = true
	}
	if len(seen) != 25 {
		t.Fatalf("scan saw %d items", len(seen))
	}
	sc, err := things.ScanCount(ctx, Scan{Filter: Eq("PK", pk)})
	if err != nil || sc != 25 {
		t.Fatalf("scan count: %d %v", sc, err)
	}
	// Stopping an iteration early is fine.
	for _, err := range things.QueryAll(ctx, q) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	_, err = things.Query(ctx, Query{Key: []Cond{Eq("PK", pk)}, Cursor: "not-a-cursor"})
	if !errors.Is(err, ErrInvalidCursor) {
		t.Fatalf("bad cursor: %v", err)
	}
}

func TestBatchGetAndDelete(t *testing.T) {
	c, ctx := newClient(t), ctxT(t)
	things := c.Model("Thing")
	pk := uniq(t)
	if _, err := things.BatchWrite(ctx, []Item{{"PK": pk, "SK": "1", "n": 1}, {"PK": pk, "SK": "2", "n": 2}}, nil); err != nil {
		t.Fatal(err)
	}
	res, err := things.BatchGet(ctx, []Key{K(pk, "2"), K(pk, "9"), K(pk, "1")}, Consistent())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 2 || res.Items[0].String("SK") != "2" || res.Items[1].String("SK") != "1" {
		t.Fatalf("items: %v", res.Items)
	}
	if len(res.Missing) != 1 || res.Missing[0].String("SK") != "9" {
		t.Fatalf("missing: %v", res.Missing)
	}
	if n, err := things.BatchWrite(ctx, nil, []Key{K(pk, "1"), K(pk, "2")}); err != nil || n != 2 {
		t.Fatalf("batch delete: %d %v", n, err)
	}
	res, err = things.BatchGet(ctx, []Key{K(pk, "1")})
	if err != nil || len(res.Items) != 0 || len(res.Missing) != 1 {
		t.Fatalf("after delete: %v %v", res, err)
	}
}

func TestTransactions(t *testing.T) {
	c, ctx := newClient(t), ctxT(t)
	pk := uniq(t)
	err := c.TransactWrite(ctx, NewTx().
		Create("Thing", Item{"PK": pk, "SK": "a", "count": 1}).
		Put("Counter", Item{"id": pk, "value": 10}))
	if err != nil {
		t.Fatal(err)
	}
	err = c.TransactWrite(ctx, NewTx().
		Update("Thing", K(pk, "a"), NewUpdate().Add("count", 1).ExpectedVersion(0)).
		Create("Counter", Item{"id": pk, "value": 11}))
	var te *Error
	if !errors.As(err, &te) || !errors.Is(err, ErrTransactionCanceled) {
		t.Fatalf("want TransactionCanceled, got %v", err)
	}
	rs := te.Reasons()
	if len(rs) != 2 || rs[0].Code != "None" || rs[1].Code != "ConditionalCheckFailed" {
		t.Fatalf("reasons: %+v", rs)
	}
	err = c.TransactWrite(ctx, NewTx().
		Update("Thing", K(pk, "a"), NewUpdate().Add("count", 1).ExpectedVersion(0)).
		Check("Counter", K(pk), C("value", "=", 10)))
	if err != nil {
		t.Fatal(err)
	}
	items, err := c.TransactGet(ctx, []TxGet{{Model: "Thing", Key: K(pk, "a")}, {Model: "Counter", Key: K(pk + "-none")}, {Model: "Counter", Key: K(pk), Select: []string{"value"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 || items[0].Number("count") != "2" || items[1] != nil || items[2].Number("value") != "10" {
		t.Fatalf("transact get: %v", items)
	}
	// The same client token with the same body is applied once.
	tx := NewTx().Update("Counter", K(pk), NewUpdate().Add("value", 5))
	tx.ClientToken = "tok-" + fmt.Sprint(time.Now().UnixNano())
	for i := 0; i < 2; i++ {
		if err := c.TransactWrite(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.Model("Counter").Get(ctx, K(pk))
	if err != nil || got.Number("value") != "15" {
		t.Fatalf("token replay: %v %v", got, err)
	}
}

func TestModelsAndTables(t *testing.T) {
	c, ctx := newClient(t), ctxT(t)
	models, err := c.Models(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range models {
		names[m.Name] = true
	}
	// The job ledger's models are the daemon's own: not listed.
	if !names["Thing"] || names["JobMeta"] {
		t.Fatalf("models: %v", names)
	}
	info, err := c.Model("Thing").Describe(ctx)
	if err != nil || info.Keys.Sort == nil || info.Keys.Sort.Attribute != "SK" || info.Table.Name != "client_things" {
		t.Fatalf("describe: %+v %v", info, err)
	}
	tbl, err := c.Model("Thing").EnsureTable(ctx)
	if err != nil || tbl.Created || tbl.Table != "client_things" {
		t.Fatalf("ensure table: %+v %v", tbl, err)
	}
	name := "Dyn" + fmt.Sprint(time.Now().UnixNano()%1e9)
	doc := map[string]any{"dms_version": "0.2", "name": name, "table": map[string]any{"name": strings.ToLower(name)},
		"keys":       map[string]any{"partition": map[string]any{"attribute": "id", "type": "S"}},
		"attributes": []any{map[string]any{"attribute": "id", "type": "S", "required": true, "roles": []any{"pk"}}}}
	created, err := c.PutModel(ctx, name, doc, false)
	if err != nil || !created {
		t.Fatalf("put model: %v %v", created, err)
	}
	if _, err := c.Model(name).EnsureTable(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Model(name).Create(ctx, Item{"id": "x"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Model(name).DeleteTable(ctx); !errors.Is(err, ErrForbidden) {
		t.Fatalf("delete table without the flag: %v", err)
	}
}

func TestLedger(t *testing.T) {
	c, ctx := newClient(t), ctxT(t)
	id := "job/" + uniq(t)
	tenant := "tenant-" + uniq(t)
	job, err := c.CreateJob(ctx, NewJob{JobID: id, TenantID: tenant})
	if err != nil || job.Version != 1 || job.Status != JobPending {
		t.Fatalf("create job: %+v %v", job, err)
	}
	if _, err := c.CreateJob(ctx, NewJob{JobID: id, TenantID: tenant}); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("duplicate job: %v", err)
	}
	if _, err := c.GetJob(ctx, id+"-none"); !errors.Is(err, ErrJobNotFound) {
		t.Fatalf("missing job: %v", err)
	}
	for i := 0; i < 3; i++ {
		if _, err := c.CreateJob(ctx, NewJob{TenantID: tenant}); err != nil {
			t.Fatal(err)
		}
	}
	var listed int
	for j, err := range c.ListJobs(ctx, JobFilter{TenantID: tenant, Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		if j.TenantID != tenant {
			t.Fatalf("listed %+v", j)
		}
		listed++
	}
	if listed != 4 {
		t.Fatalf("listed %d jobs", listed)
	}
	job, err = c.TransitionJob(ctx, id, 1, JobPending, JobRunning)
	if err != nil || job.Version != 2 || job.Status != JobRunning {
		t.Fatalf("transition: %+v %v", job, err)
	}
	if _, err := c.TransitionJob(ctx, id, 1, "", JobSucceeded); !errors.Is(err, ErrVersionConflict) {
		t.Fatalf("stale transition: %v", err)
	}
	for _, rid := range []string{"r1", "r2", "r3"} {
		if _, err := c.PutRecord(ctx, id, rid, "PENDING", nil); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := c.PutRecord(ctx, id, "r2", "FAILED", &ErrorEnvelope{Type: "HttpError", Message: "login failed: password=hunter2",
		Fields: map[string]any{"api_key": "k-1", "row": 2}})
	if err != nil || rec.Error == nil || strings.Contains(rec.Error.Message, "hunter2") || rec.Error.Fields["api_key"] != "[REDACTED]" {
		t.Fatalf("record: %+v %v", rec, err)
	}
	var pending []string
	for r, err := range c.ListRecords(ctx, id, "PENDING") {
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, r.RecordID)
	}
	if strings.Join(pending, ",") != "r1,r3" {
		t.Fatalf("pending records: %v", pending)
	}
	if r, err := c.GetRecord(ctx, id, "r2"); err != nil || r.Status != "FAILED" || r.Version != 2 {
		t.Fatalf("get record: %+v %v", r, err)
	}
	// Leases.
	l, err := c.AcquireLease(ctx, id, "w1", time.Minute)
	if err != nil || l.Owner != "w1" || l.ExpiresAt == 0 {
		t.Fatalf("lease: %+v %v", l, err)
	}
	if _, err := c.AcquireLease(ctx, id, "w2", time.Minute); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("held lease: %v", err)
	}
	if _, err := c.RefreshLease(ctx, id, "w2", time.Minute); !errors.Is(err, ErrLeaseNotOwned) {
		t.Fatalf("refresh by another owner: %v", err)
	}
	if _, err := c.RefreshLease(ctx, id, "w1", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := c.ReleaseLease(ctx, id, "w2"); !errors.Is(err, ErrLeaseNotOwned) {
		t.Fatalf("release by another owner: %v", err)
	}
	if err := c.ReleaseLease(ctx, id, "w1"); err != nil {
		t.Fatal(err)
	}
	if err := c.ReleaseLease(ctx, id, "w1"); err != nil {
		t.Fatalf("second release: %v", err)
	}
	// Idempotency.
	out, err := c.BeginRequest(ctx, id, "charge/1", 0)
	if err != nil || out.Outcome != OutcomeCreated {
		t.Fatalf("begin: %+v %v", out, err)
	}
	out, err = c.BeginRequest(ctx, id, "charge/1", 0)
	if err != nil || out.Outcome != OutcomeAlreadyInProgress {
		t.Fatalf("begin again: %+v %v", out, err)
	}
	big := json.Number("98765432109876543210987654321098765432")
	out, err = c.CompleteRequest(ctx, id, "charge/1", map[string]any{"amount": big}, nil)
	if err != nil || out.Outcome != OutcomeCompleted {
		t.Fatalf("complete: %+v %v", out, err)
	}
	out, err = c.BeginRequest(ctx, id, "charge/1", time.Hour)
	if err != nil || out.Outcome != OutcomeAlreadyCompleted || out.Result.(map[string]any)["amount"] != big {
		t.Fatalf("begin after completion: %+v %v", out, err)
	}
	if _, err := c.CompleteRequest(ctx, id, "never", nil, nil); !errors.Is(err, ErrItemNotFound) {
		t.Fatalf("complete of an unknown key: %v", err)
	}
}

// refreshCounter counts the lease refreshes that the daemon answered 200.
type refreshCounter struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (r *refreshCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err == nil && resp.StatusCode == 200 && strings.HasSuffix(req.URL.Path, "/lease/refresh") {
		r.n.Add(1)
	}
	return resp, err
}

func TestWithLeaseRefreshesAndReleases(t *testing.T) {
	// A daemon with a frozen clock that only the test moves (--test-clock):
	// the lease expires when the test says, not when a loaded machine is slow.
	d, err := startDaemon("--test-clock")
	if err != nil {
		t.Fatal(err)
	}
	defer d.stop()
	refreshes := &refreshCounter{next: http.DefaultTransport}
	c, err := New(Config{URL: d.URL, HTTPClient: &http.Client{Transport: refreshes}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := ctxT(t)
	advance := func(ms int) error {
		resp, err := http.Post(d.URL+"/v1/_test/clock", "application/json",
			strings.NewReader(fmt.Sprintf(`{"advance_ms": %d}`, ms)))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("POST /v1/_test/clock: HTTP %d", resp.StatusCode)
		}
		return nil
	}
	id := uniq(t)
	if _, err := c.CreateJob(ctx, NewJob{JobID: id, TenantID: "t"}); err != nil {
		t.Fatal(err)
	}
	// A 2 s lease on the clock S.123: expires_at S+2, expired once the clock
	// reads S+3 (expires_at < now, in seconds). Refreshed every 2/3 s.
	err = c.WithLease(ctx, id, "worker-a", 2*time.Second, func(wctx context.Context) error {
		if _, err := c.AcquireLease(wctx, id, "worker-b", time.Minute); !errors.Is(err, ErrLeaseHeld) {
			return fmt.Errorf("another worker got the lease: %v", err)
		}
		// 1.5 s on (S+1.623), then wait for a refresh made since: the second
		// answer from now, as one may have been on its way. It moves
		// expires_at to S+3.
		if err := advance(1500); err != nil {
			return err
		}
		seen := refreshes.n.Load()
		deadline := time.Now().Add(30 * time.Second)
		for refreshes.n.Load() < seen+2 {
			if time.Now().After(deadline) {
				return errors.New("the helper never refreshed the lease")
			}
			select {
			case <-time.After(20 * time.Millisecond):
			case <-wctx.Done():
				return fmt.Errorf("the lease was lost: %w", wctx.Err())
			}
		}
		// At S+3.123 the first expiry has passed: only the refresh keeps the
		// lease held (the ledger's tables are sealed from the model API, so
		// the lease is observed as another worker sees it).
		if err := advance(1500); err != nil {
			return err
		}
		if _, err := c.AcquireLease(wctx, id, "worker-b", time.Minute); !errors.Is(err, ErrLeaseHeld) {
			return fmt.Errorf("the lease was not refreshed: worker-b acquire gave %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Released: another owner gets it at once.
	if _, err := c.AcquireLease(ctx, id, "worker-b", time.Minute); err != nil {
		t.Fatalf("after release: %v", err)
	}
	// Held by b: WithLease does not run the work.
	ran := false
	err = c.WithLease(ctx, id, "worker-a", time.Minute, func(context.Context) error { ran = true; return nil })
	if !errors.Is(err, ErrLeaseHeld) || ran {
		t.Fatalf("held: %v ran=%v", err, ran)
	}
}

func TestWithLeaseStopsWorkWhenTheLeaseIsLost(t *testing.T) {
	c, ctx := newClient(t), ctxT(t)
	id := uniq(t)
	if _, err := c.CreateJob(ctx, NewJob{JobID: id, TenantID: "t"}); err != nil {
		t.Fatal(err)
	}
	workErr := errors.New("work stopped")
	err := c.WithLease(ctx, id, "worker-a", time.Second, func(wctx context.Context) error {
		// Simulate a takeover: the lease is released behind the worker's
		// back and another worker takes it.
		if err := c.ReleaseLease(wctx, id, "worker-a"); err != nil {
			return err
		}
		if _, err := c.AcquireLease(wctx, id, "worker-b", time.Minute); err != nil {
			return err
		}
		select {
		case <-wctx.Done():
			return workErr
		case <-time.After(30 * time.Second):
			return errors.New("work was not canceled")
		}
	})
	if !errors.Is(err, ErrLeaseLost) || !errors.Is(err, ErrLeaseNotOwned) || !errors.Is(err, workErr) {
		t.Fatalf("want lease lost, got %v", err)
	}
	// b still holds it: WithLease did not release b's lease.
	if _, err := c.RefreshLease(ctx, id, "worker-b", time.Minute); err != nil {
		t.Fatalf("b's lease: %v", err)
	}
}

func addFault(t *testing.T, rule map[string]any) {
	t.Helper()
	b, _ := json.Marshal(rule)
	resp, err := http.Post(shared.URL+"/v1/_faults", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("fault rule: HTTP %d", resp.StatusCode)
	}
	t.Cleanup(func() {
		req, _ := http.NewRequest("DELETE", shared.URL+"/v1/_faults", nil)
		if r, err := http.DefaultClient.Do(req); err == nil {
			r.Body.Close()
		}
	})
}

func TestRetriesOfRetryableErrors(t *testing.T) {
	ctx := ctxT(t)
	c := newClient(t)
	things := c.Model("Thing")
	pk := uniq(t)
	if _, err := things.Put(ctx, Item{"PK": pk, "SK": "r"}); err != nil {
		t.Fatal(err)
	}
	// The daemon retries the backend itself (4 attempts); 6 failures outlast
	// its first answer but not the client's second attempt.
	addFault(t, map[string]any{"op": "GetItem", "model": "Thing", "error": "ServiceUnavailable", "times": 6})
	if _, err := things.Get(ctx, K(pk, "r")); err != nil {
		t.Fatalf("a retried read: %v", err)
	}
	// Without client retries the same failure reaches the caller, retryable.
	once, err := New(Config{URL: shared.URL, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	addFault(t, map[string]any{"op": "GetItem", "model": "Thing", "error": "ServiceUnavailable", "times": 4})
	_, err = once.Model("Thing").Get(ctx, K(pk, "r"))
	var te *Error
	if !errors.As(err, &te) || !te.Retryable || !errors.Is(err, ErrBackendUnavailable) {
		t.Fatalf("want a retryable BackendUnavailable, got %v", err)
	}
	// A non-idempotent write is not retried after BackendUnavailable.
	addFault(t, map[string]any{"op": "PutItem", "model": "Thing", "error": "ServiceUnavailable", "times": 6})
	_, err = things.Create(ctx, Item{"PK": pk, "SK": "c"})
	if !errors.Is(err, ErrBackendUnavailable) {
		t.Fatalf("create under faults: %v", err)
	}
}

func TestRequestIDPropagation(t *testing.T) {
	c, ctx := newClient(t), ctxT(t)
	rid := "trace-" + fmt.Sprint(time.Now().UnixNano())
	_, err := c.Model("Thing").Get(WithRequestID(ctx, rid), K("none", "none"))
	var te *Error
	if !errors.As(err, &te) || te.RequestID != rid {
		t.Fatalf("request id: %v", err)
	}
	_, err = c.Model("Thing").Get(ctx, K("none", "none"))
	if !errors.As(err, &te) || len(te.RequestID) != 32 {
		t.Fatalf("generated request id: %v", err)
	}
}

func TestConfigFromEnvironmentWithToken(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := startDaemon("--auth-token-file", tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	defer d.stop()
	ctx := ctxT(t)
	t.Setenv("TABLETHEORYD_URL", d.URL)
	t.Setenv("TABLETHEORYD_TOKEN_FILE", "")
	anon, err := NewFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anon.Models(ctx); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("without a token: %v", err)
	}
	t.Setenv("TABLETHEORYD_TOKEN_FILE", tokenFile)
	c, err := NewFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Models(ctx); err != nil {
		t.Fatalf("with the token from the environment: %v", err)
	}
	if err := c.Healthy(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestUnixSocketURL(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "ttd.sock")
	d, err := startDaemonListen("unix:" + sock)
	if err != nil {
		t.Fatal(err)
	}
	defer d.stop()
	c, err := New(Config{URL: d.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	pk := uniq(t)
	if _, err := c.Model("Counter").Create(ctx, Item{"id": pk, "value": 1}); err != nil {
		t.Fatal(err)
	}
	it, err := c.Model("Counter").Get(ctx, K(pk))
	if err != nil || it.Number("value") != "1" {
		t.Fatalf("over the unix socket: %v %v", it, err)
	}
}

func TestContextDeadlineBoundsTheCall(t *testing.T) {
	c, ctx := newClient(t), ctxT(t)
	pk := uniq(t)
	if _, err := c.Model("Counter").Put(ctx, Item{"id": pk}); err != nil {
		t.Fatal(err)
	}
	// Every GetItem of Counter takes 5 s; the caller gives the call 250 ms.
	addFault(t, map[string]any{"op": "GetItem", "model": "Counter", "latency_ms": 5000, "times": 1})
	short, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
	defer cancel()
	_, err := c.Model("Counter").Get(short, K(pk))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the context's deadline, got %v", err)
	}
}
