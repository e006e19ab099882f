// SPDX-License-Identifier: Apache-2.0

// Command xlang is the Go side of the cross-language client test (clients/XLANG.md):
// write, read and lease through the Go client.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	tt "github.com/theory-cloud/tabletheoryd/clients/go"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "xlang (go):", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return errors.New("usage: xlang write PREFIX | read PREFIX | lease JOBPREFIX WORKER N")
	}
	c, err := tt.NewFromEnv()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	switch args[0] {
	case "write":
		return write(ctx, c, args[1])
	case "read":
		return read(ctx, c, args[1])
	case "lease":
		if len(args) != 4 {
			return errors.New("usage: xlang lease JOBPREFIX WORKER N")
		}
		n, err := strconv.Atoi(args[3])
		if err != nil {
			return err
		}
		return lease(ctx, c, args[1], args[2], n)
	}
	return fmt.Errorf("unknown command %q", args[0])
}

func write(ctx context.Context, c *tt.Client, prefix string) error {
	blob := make([]byte, 256)
	for i := range blob {
		blob[i] = byte(i)
	}
	items := c.Model("XItem")
	id := prefix + "-1"
	_, err := items.Create(ctx, tt.Item{
		"id":          id,
		"n_big":       json.Number("12345678901234567890123456789012345678"),
		"n_frac":      json.Number("0.12345678901234567890123456789012345678"),
		"n_neg_small": json.Number("-1E-130"),
		"tags":        tt.StringSet{"alpha", "beta", "gamma"},
		"nums":        tt.NumberSet{"1", "2.5", "-3", "10000000000000000000000000000000000000"},
		"bins":        tt.BinarySet{{0x00, 0x01}, {0xff}},
		"blob":        blob,
		"flag":        false,
		"nothing":     nil,
		"list":        []any{json.Number("1"), "two", map[string]any{"three": json.Number("3")}},
		"map":         map[string]any{"k": "v", "n": json.Number("42"), "deep": map[string]any{"x": []any{true, nil}}},
	})
	if err != nil {
		return err
	}
	_, err = items.Patch(ctx, tt.K(id), tt.NewUpdate().Set("flag", true))
	return err
}

// canon converts the client's native values to the harness's canonical JSON.
func canon(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case json.Number:
		return string(x), nil
	case []byte:
		return base64.StdEncoding.EncodeToString(x), nil
	case tt.StringSet:
		return []string(x.Sorted()), nil
	case tt.NumberSet:
		out := []string{}
		for _, n := range x.Sorted() {
			out = append(out, string(n))
		}
		return out, nil
	case tt.BinarySet:
		out := []string{}
		for _, b := range x {
			out = append(out, base64.StdEncoding.EncodeToString(b))
		}
		sort.Strings(out)
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			c, err := canon(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			c, err := canon(e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case tt.Item:
		return canon(map[string]any(x))
	}
	return nil, fmt.Errorf("unexpected value of type %T", v)
}

func read(ctx context.Context, c *tt.Client, prefix string) error {
	it, err := c.Model("XItem").Get(ctx, tt.K(prefix+"-1"), tt.Consistent())
	if err != nil {
		return err
	}
	out, err := canon(it)
	if err != nil {
		return err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = fmt.Println(string(b))
	return err
}

func lease(ctx context.Context, c *tt.Client, prefix, worker string, n int) error {
	for i := 1; i <= n; i++ {
		job := fmt.Sprintf("%s-%d", prefix, i)
		_, err := c.AcquireLease(ctx, job, worker, 60*time.Second)
		switch {
		case err == nil:
			fmt.Println(job, "won")
		case errors.Is(err, tt.ErrLeaseHeld):
			fmt.Println(job, "lost")
		default:
			return err
		}
	}
	return nil
}
