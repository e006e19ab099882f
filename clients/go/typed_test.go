// SPDX-License-Identifier: Apache-2.0

package tabletheoryd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The typed layer with the models tools/typegen generates: the quickstart in
// examples/go runs against the daemon, the generated file is up to date, and
// a misspelt attribute or a wrong value type does not compile.

func examplesDir(t *testing.T) string {
	d, err := filepath.Abs("../../examples/go")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestTypedQuickstartRuns(t *testing.T) {
	cmd := exec.Command("go", "run", "./quickstart")
	cmd.Dir = examplesDir(t)
	cmd.Env = append(os.Environ(), "TABLETHEORYD_URL="+shared.URL, "TABLETHEORYD_TOKEN_FILE=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("quickstart: %v\n%s", err, out)
	}
	for _, want := range []string{"updated anna to version 1", "total 11.25", "job RUNNING"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("quickstart output lacks %q:\n%s", want, out)
		}
	}
}

func TestTypedGeneratedModelsAreUpToDate(t *testing.T) {
	dir := examplesDir(t)
	out := filepath.Join(t.TempDir(), "models_gen.go")
	for i := 0; i < 2; i++ {
		cmd := exec.Command("python3", filepath.Join(dir, "..", "..", "tools", "typegen", "typegen.py"),
			"--daemon", daemonPath(), "--models", filepath.Join(dir, "..", "models"),
			"--lang", "go", "--go-package", "models", "--out", out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("typegen: %v\n%s", err, b)
		}
		got, _ := os.ReadFile(out)
		want, _ := os.ReadFile(filepath.Join(dir, "models", "models_gen.go"))
		if string(got) != string(want) {
			t.Fatal("examples/go/models/models_gen.go differs from what typegen generates")
		}
	}
}

func TestTypedEveryModelOfTheTestsGeneratesGoThatVets(t *testing.T) {
	dir := examplesDir(t)
	pkg := filepath.Join(dir, "_allgen")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(pkg)
	root := filepath.Join(dir, "..", "..")
	args := []string{filepath.Join(root, "tools", "typegen", "typegen.py"), "--daemon", daemonPath()}
	for _, m := range []string{"examples/models", "tests/integration/models/itest.yml", "tests/clients/models"} {
		args = append(args, "--models", filepath.Join(root, m))
	}
	args = append(args, "--lang", "go", "--go-package", "allgen", "--out", filepath.Join(pkg, "models_gen.go"))
	if b, err := exec.Command("python3", args...).CombinedOutput(); err != nil {
		t.Fatalf("typegen: %v\n%s", err, b)
	}
	if b, err := exec.Command("gofmt", "-l", pkg).CombinedOutput(); err != nil || len(b) > 0 {
		t.Fatalf("the generated Go is not gofmt'ed: %v\n%s", err, b)
	}
	cmd := exec.Command("go", "vet", "./_allgen")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet: %v\n%s", err, b)
	}
}

func TestTypedMisspeltAttributeOrWrongTypeDoesNotCompile(t *testing.T) {
	bad := []struct{ name, code string }{
		{"Nickame", `users.Create(ctx, &models.User{PK: "a", SK: "b", Nickame: ptr("x")})`},
		{"Nicknam", `users.Update(ctx, models.UserKey{PK: "a", SK: "b"}, models.UserPatch{Nicknam: ptr("x")})`},
		{"PKK", `users.Get(ctx, models.UserKey{PKK: "a", SK: "b"})`},
		{"as *string value", `users.Update(ctx, models.UserKey{PK: "a", SK: "b"}, models.UserPatch{Nickname: ptr(5)})`},
		{"float", `orders.Update(ctx, models.OrderKey{PK: "a", SK: "b"}, models.OrderPatch{Amount: 1.5})`},
		{"SortEq", `tt.QueryAll(ctx, users, models.UserIndexTable, "a", tt.QueryOptions{}, tt.SortEq(5))`},
	}
	dir := examplesDir(t)
	for i, b := range bad {
		pkg := fmt.Sprintf("_bad%d", i)
		if err := os.MkdirAll(filepath.Join(dir, pkg), 0o755); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(filepath.Join(dir, pkg))
		src := `package main

import (
	"context"

	tt "github.com/theory-cloud/tabletheoryd/clients/go"

	"example.com/tabletheoryd-examples/models"
)

func ptr[V any](v V) *V { return &v }

func main() {
	ctx := context.Background()
	c, _ := tt.NewFromEnv()
	users := tt.Bind(c, &models.UserModel)
	orders := tt.Bind(c, &models.OrderModel)
	_, _ = users, orders
	_ = ` + b.code + `
}
`
		if err := os.WriteFile(filepath.Join(dir, pkg, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("go", "vet", "./"+pkg)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("%s: go vet accepted %s", b.name, b.code)
			continue
		}
		if !strings.Contains(string(out), b.name) {
			t.Errorf("%s: the error does not name it:\n%s", b.name, out)
		}
	}
}
