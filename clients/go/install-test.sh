#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Install test: a fresh module uses the client with exactly the lines docs/clients.md
# gives (with /path/to/tabletheoryd replaced by this checkout), then go build and go vet;
# then the same with the documented `go work init` line instead;
# offline (GOPROXY=off: the client needs nothing but the standard library).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export GOPROXY=off GOFLAGS=
go mod init example.com/app > /dev/null 2>&1
for line in \
    "go mod edit -require=github.com/theory-cloud/tabletheoryd/clients/go@v0.1.0" \
    "go mod edit -replace=github.com/theory-cloud/tabletheoryd/clients/go=/path/to/tabletheoryd/clients/go"
do
    if ! grep -qxF "$line" "$root/docs/clients.md"; then
        echo "install-test: docs/clients.md does not give: $line" >&2
        exit 1
    fi
    sh -c "$(printf '%s\n' "$line" | sed "s#/path/to/tabletheoryd#$root#")"
done
cat > main.go <<'GO'
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	tt "github.com/theory-cloud/tabletheoryd/clients/go"
)

func main() {
	c, err := tt.NewFromEnv()
	if err != nil {
		panic(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = c.Model("User").Get(ctx, tt.K("USER#1", "PROFILE"))
	fmt.Println(errors.Is(err, tt.ErrItemNotFound), errors.Is(err, context.DeadlineExceeded))
}
GO
go build -o app ./...
go vet ./...
# The workspace form the docs give instead.
line="go work init . /path/to/tabletheoryd/clients/go"
if ! grep -qF "$line" "$root/docs/clients.md"; then
    echo "install-test: docs/clients.md does not give: $line" >&2
    exit 1
fi
mkdir "$work/ws"
cp main.go "$work/ws/"
cd "$work/ws"
go mod init example.com/ws > /dev/null 2>&1
sh -c "$(printf '%s\n' "$line" | sed "s#/path/to/tabletheoryd#$root#")"
go build -o app ./...
go vet ./...
echo "install-test: fresh modules build with the documented go mod edit lines and go work line"
