// SPDX-License-Identifier: Apache-2.0

// The client's sentinels against the daemon's list of codes (the ErrorCode enum of
// openapi.yaml), so a code added to the daemon fails here until the client has one.

package tabletheoryd

import (
	"bufio"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
)

// openapiErrorCodes returns the enum list under components/schemas/ErrorCode, read line
// by line (the module has no YAML dependency, and the block is a plain list of names).
func openapiErrorCodes(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../../openapi.yaml") // go test runs in the package directory
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var codes []string
	inSchema, inEnum, indent := false, false, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		stripped := strings.TrimSpace(line)
		depth := len(line) - len(strings.TrimLeft(line, " "))
		switch {
		case !inSchema:
			inSchema, indent = stripped == "ErrorCode:", depth
		case stripped != "" && depth <= indent:
			return codes // the next schema
		case stripped == "enum:":
			inEnum = true
		case inEnum && strings.HasPrefix(stripped, "- "):
			codes = append(codes, strings.Trim(strings.TrimSpace(stripped[2:]), `'"`))
		case inEnum && stripped != "":
			return codes // the enum ended
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return codes
}

func TestEveryDaemonErrorCodeHasASentinel(t *testing.T) {
	codes := openapiErrorCodes(t)
	known := map[string]bool{}
	for _, c := range codes {
		known[c] = true
	}
	if !known["ValidationError"] || !known["Internal"] || len(known) != len(codes) {
		t.Fatalf("ErrorCode enum of openapi.yaml read wrongly: %v", codes)
	}
	for _, code := range codes {
		s, ok := sentinels[code]
		if !ok {
			t.Errorf("no sentinel for the daemon's code %s", code)
			continue
		}
		body := `{"error":{"code":"` + code + `","message":"m","retryable":false,"details":{}},"request_id":"r"}`
		err := parseError(&http.Response{StatusCode: 400, Header: http.Header{}}, []byte(body), "r")
		if !errors.Is(err, s) {
			t.Errorf("an answer with code %s does not match its sentinel", code)
		}
		for other, o := range sentinels {
			if other != code && errors.Is(err, o) {
				t.Errorf("an answer with code %s matches the sentinel of %s", code, other)
			}
		}
	}
	// The one client-side code: an answer without the daemon's envelope.
	for code := range sentinels {
		if !known[code] && code != ErrUnexpectedResponse.Code {
			t.Errorf("sentinel for %s, a code the daemon does not have", code)
		}
	}
}
