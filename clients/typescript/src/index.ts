// SPDX-License-Identifier: Apache-2.0
// TypeScript client of tabletheoryd, the DynamoDB ORM sidecar (Node's fetch, no dependencies).
export * from "./client.js";
export * from "./errors.js";
export * from "./expr.js";
export * from "./ledger.js";
export * from "./values.js";
export * from "./typed.js";
