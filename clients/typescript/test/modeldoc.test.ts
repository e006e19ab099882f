// SPDX-License-Identifier: Apache-2.0
// ModelDoc takes the project's own model shape (required, optional, omit_empty, json,
// tags, ... on attributes): this file must compile under tsc --strict (test.sh builds it)
// and the daemon must accept the model.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { Client } from "../src/index.js";
import { Daemon } from "./daemon.js";

let d: Daemon;
before(async () => { d = await Daemon.start(); });
after(async () => { await d.stop(); });

test("registerModel accepts a DMS model as the docs write it", async () => {
  const c = new Client({ url: d.url });
  const created = await c.registerModel({
    name: "ModelDocShape",
    table: { name: "modeldoc_shape" },
    keys: { partition: { attribute: "PK", type: "S" } },
    attributes: [
      { attribute: "PK", type: "S", required: true, roles: ["pk"] },
      { attribute: "note", type: "S", optional: true, omit_empty: true },
      { attribute: "doc", type: "M", json: true, optional: true },
      { attribute: "version", type: "N", format: "int", roles: ["version"] },
    ],
  });
  assert.equal(created, true);
});
