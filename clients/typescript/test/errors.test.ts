// SPDX-License-Identifier: Apache-2.0
// The client's error classes against the daemon's list of codes (the ErrorCode enum of
// openapi.yaml), so a code added to the daemon fails here until the client has a class.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import * as tt from "../src/index.js";
import { ConflictError, NotFoundError, RetryableError, TableTheoryError, errorClasses, fromEnvelope }
  from "../src/index.js";

// Compiled to dist/test/: the client directory is two levels up, the repository four.
const CLIENT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const OPENAPI = resolve(CLIENT_DIR, "..", "..", "openapi.yaml");

/** The `enum:` list under components/schemas/ErrorCode, read line by line (the client has
 * no YAML dependency, and the block is a plain list of names). */
function openapiErrorCodes(): string[] {
  const codes: string[] = [];
  let inSchema = false, inEnum = false, indent = 0;
  for (const line of readFileSync(OPENAPI, "utf8").split("\n")) {
    const stripped = line.trim();
    const depth = line.length - line.trimStart().length;
    if (!inSchema) {
      inSchema = stripped === "ErrorCode:";
      indent = depth;
    } else if (stripped && depth <= indent) {
      break; // the next schema
    } else if (stripped === "enum:") {
      inEnum = true;
    } else if (inEnum && stripped.startsWith("- ")) {
      codes.push(stripped.slice(2).trim().replace(/^['"]|['"]$/g, ""));
    } else if (inEnum && stripped) {
      break; // the enum ended
    }
  }
  return codes;
}

const CODES = openapiErrorCodes();
const GROUPS: unknown[] = [TableTheoryError, NotFoundError, ConflictError, RetryableError];

describe("error codes of openapi.yaml", () => {
  test("the enum was read", () => {
    assert.ok(CODES.includes("ValidationError") && CODES.includes("Internal"), CODES.join(","));
    assert.equal(new Set(CODES).size, CODES.length);
  });

  for (const code of CODES) {
    test(`${code} has its own class`, () => {
      const Cls = errorClasses[code];
      assert.ok(Cls, `no error class for the daemon's code ${code}`);
      assert.equal(Cls.code, code);
      assert.equal(Cls.name, code);
      assert.ok(!GROUPS.includes(Cls), `${code} maps to a group class`);
      assert.equal((tt as Record<string, unknown>)[code], Cls, `${code} is not exported`);
      const err = fromEnvelope(400, {
        error: { code, message: "m", retryable: false, details: {} }, request_id: "r",
      }, {}, "r");
      assert.equal(err.constructor, Cls);
      assert.equal(err.code, code);
    });
  }

  test("no class for a code the daemon does not have", () => {
    assert.deepEqual(Object.keys(errorClasses).filter((c) => !CODES.includes(c)), []);
  });
});
