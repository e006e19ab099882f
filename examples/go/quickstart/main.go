// Quickstart: the typed Go client with models generated from examples/models.
//
// Generate the types (from the repository's root):
//
//	python3 tools/typegen/typegen.py --models examples/models --lang go \
//	    --go-package models --out examples/go/models/models_gen.go
//
// Run it from examples/go against a daemon started with --models examples/models:
//
//	TABLETHEORYD_URL=http://127.0.0.1:8737 go run ./quickstart
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"time"

	tt "github.com/theory-cloud/tabletheoryd/clients/go"

	"example.com/tabletheoryd-examples/models"
)

func ptr[V any](v V) *V { return &v }

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	id := hex.EncodeToString(b) // keys of this run
	c, err := tt.NewFromEnv()
	if err != nil {
		return err
	}
	defer c.Close()

	// Register the generated models (no-op when the daemon loaded the same ones).
	if _, err := tt.Register(ctx, c, &models.UserModel, false); err != nil {
		return err
	}
	if _, err := tt.Register(ctx, c, &models.OrderModel, false); err != nil {
		return err
	}
	users := tt.Bind(c, &models.UserModel)
	orders := tt.Bind(c, &models.OrderModel)
	if _, err := users.EnsureTable(ctx); err != nil {
		return err
	}
	if _, err := orders.EnsureTable(ctx); err != nil {
		return err
	}

	// Create, then update only if nobody changed the item in between.
	key := models.UserKey{PK: "USER#" + id, SK: "PROFILE"}
	ann, err := users.Create(ctx, &models.User{PK: key.PK, SK: key.SK, Nickname: ptr("ann"),
		Tags: tt.StringSet{"admin"}})
	if err != nil {
		return err
	}
	ann, err = users.Update(ctx, key, models.UserPatch{Nickname: ptr("anna")}, *ann.Version)
	if err != nil {
		return err
	}
	fmt.Println("updated", *ann.Nickname, "to version", *ann.Version)
	if none, err := users.Get(ctx, models.UserKey{PK: key.PK, SK: "NONE"}); err != nil || none != nil {
		return fmt.Errorf("expected no item, got %v, %v", none, err)
	}

	// A batch: five orders written together, read back together.
	batch := orders.Batch()
	for i := 0; i < 5; i++ {
		batch.Put(&models.Order{PK: "CUST#" + id, SK: fmt.Sprintf("ORDER#%d", i),
			Amount: json.Number(fmt.Sprintf("%d.25", i)), Status: ptr("new")})
	}
	if _, err := batch.Commit(ctx); err != nil {
		return err
	}
	found, missing, err := orders.BatchGet(ctx, []models.OrderKey{
		{PK: "CUST#" + id, SK: "ORDER#0"}, {PK: "CUST#" + id, SK: "ORDER#9"}})
	if err != nil || len(found) != 1 || len(missing) != 1 || missing[0].SK != "ORDER#9" {
		return fmt.Errorf("batch get: %d found, %v missing, %v", len(found), missing, err)
	}

	// A query across pages: two orders per request, the iterator follows the cursor.
	cents := int64(0)
	for o, err := range tt.QueryAll(ctx, orders, models.OrderIndexTable, "CUST#"+id,
		tt.QueryOptions{Limit: 2}, tt.SortBeginsWith("ORDER#")) {
		if err != nil {
			return err
		}
		var whole, frac int64
		if _, err := fmt.Sscanf(string(o.Amount), "%d.%d", &whole, &frac); err != nil {
			return err
		}
		cents += whole*100 + frac // amounts are exact decimals (json.Number)
	}
	fmt.Printf("total %d.%02d\n", cents/100, cents%100)
	if cents != 1125 {
		return fmt.Errorf("total %d cents", cents)
	}

	// A transaction: all or nothing.
	tx := tt.NewTypedTx()
	tt.TxCreate(tx, &models.OrderModel, &models.Order{PK: "CUST#" + id, SK: "ORDER#5", Amount: "1.50"})
	tt.TxUpdate(tx, &models.UserModel, key, models.UserPatch{Nickname: ptr("ann (customer)")}, *ann.Version)
	if err := tx.Commit(ctx, c); err != nil {
		return err
	}

	// A job with a lease: only its holder works on the job.
	if _, err := c.EnsureJobsTable(ctx); err != nil {
		return err
	}
	job, err := c.CreateJob(ctx, tt.NewJob{TenantID: "tenant-" + id, JobID: "import-" + id})
	if err != nil {
		return err
	}
	err = c.WithLease(ctx, job.JobID, "quickstart-"+id, 30*time.Second, func(ctx context.Context) error {
		_, err := c.TransitionJob(ctx, job.JobID, job.Version, "", "RUNNING")
		return err
	})
	if err != nil {
		return err
	}
	job, err = c.GetJob(ctx, job.JobID)
	if err != nil {
		return err
	}
	fmt.Println("job", job.Status)
	return nil
}
