// SPDX-License-Identifier: Apache-2.0
// typecheck.ts -- calls every operation of openapi.yaml through openapi-fetch
// with valid bodies; scripts/openapi-check.sh type-checks it (tsc --noEmit)
// against the types openapi-typescript generates, so a schema that a
// TypeScript client cannot fill in (e.g. an object typed Record<string, never>)
// fails the check. It is compiled, never run.
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/schema";

type Condition = components["schemas"]["Condition"];

const api = createClient<paths>({ baseUrl: "http://127.0.0.1:8737" });
const model = { model: "User" };
const rid = { "X-Request-Id": "typecheck-1" };

const filter: Condition = {
  and: [
    { attr: "nickname", op: "begins_with", value: "a" },
    { or: [{ attr: "tags", op: "contains", value: "x" }, { attr: "ttl", op: "not_exists" }] },
    { not: { attr: "profile.city", op: "=", value: "Oslo" } },
    [{ attr: "tags", size: ">", value: 1 }],
  ],
};
const listCondition: Condition = [
  { attr: "version", op: "between", value: [0, 9] },
  { attr: "nickname", size: "between", value: [1, 20] },
];

export async function everyOperation(): Promise<void> {
  // System.
  await api.GET("/healthz", { params: { header: rid } });
  await api.GET("/readyz");
  await api.GET("/metrics");
  await api.GET("/openapi.yaml");
  await api.POST("/v1/_test/sleep", { body: { ops: 4, ms: 10, fail_op: 2 } });

  // Models and tables.
  const models = await api.GET("/v1/models");
  const names: string[] = (models.data?.models ?? []).map((m) => String(m["name"]));
  await api.GET("/v1/models/{model}", { params: { path: model } });
  await api.PUT("/v1/models/{model}", {
    params: { path: { model: "Note" }, query: { replace: true } },
    body: {
      name: "Note",
      table: { name: "notes" },
      keys: { partition: { attribute: "id", type: "S" } },
      attributes: [{ attribute: "id", type: "S", roles: ["pk"] }],
    },
  });
  await api.PUT("/v1/models/{model}/table", { params: { path: model } });
  await api.GET("/v1/models/{model}/table", { params: { path: model } });
  await api.DELETE("/v1/models/{model}/table", { params: { path: model } });

  // Items: a composite key is two path parameters, each encoded on its own.
  const created = await api.POST("/v1/models/{model}/items", {
    params: { path: model },
    body: { PK: "USER#1", SK: "PROFILE", nickname: "al", tags: ["a", "b"] },
  });
  const item = created.data ?? {};
  const key = { model: "User", pk: String(item["PK"]), sk: String(item["SK"]) };
  await api.GET("/v1/models/{model}/items/{pk}/{sk}", {
    params: { path: key, query: { select: "PK,nickname", consistent: true, format: "json" } },
  });
  await api.PUT("/v1/models/{model}/items/{pk}/{sk}", {
    params: { path: key, header: { "If-Match": '"0"' } },
    body: { PK: "USER#1", SK: "PROFILE", nickname: "bo" },
  });
  await api.PATCH("/v1/models/{model}/items/{pk}/{sk}", {
    params: { path: key },
    body: {
      set: { nickname: "cy", "profile.city": "Oslo" },
      set_if_not_exists: { ttl: 1900000000 },
      remove: ["emailHash"],
      add: { tags: ["c"] },
      delete: { tags: ["a"] },
      append: { history: ["x"] },
      prepend: { history: ["w"] },
      condition: filter,
      expected_version: 1,
    },
  });
  await api.PATCH("/v1/models/{model}/items/{pk}/{sk}", {
    params: { path: key },
    body: { fields: ["nickname"], item: { nickname: "dee", version: 2 }, upsert: false },
  });
  await api.DELETE("/v1/models/{model}/items/{pk}/{sk}", {
    params: { path: key, query: { expected_version: 3 } },
  });
  const note = { model: "Note", pk: "n/1" };
  await api.GET("/v1/models/{model}/items/{pk}", { params: { path: note } });
  await api.PUT("/v1/models/{model}/items/{pk}", {
    params: { path: note, header: { "If-None-Match": "*" } },
    body: { id: "n/1" },
  });
  await api.PATCH("/v1/models/{model}/items/{pk}", {
    params: { path: note, header: { "If-Match": '"0"' } },
    body: { set: { title: "t" }, condition: listCondition },
  });
  await api.DELETE("/v1/models/{model}/items/{pk}", {
    params: { path: note, header: { "If-Match": '"1"' } },
  });

  // Query and scan.
  const page = await api.POST("/v1/models/{model}/query", {
    params: { path: model },
    body: {
      index: "gsi-email",
      key: [{ attr: "emailHash", op: "=", value: "h" }],
      filter,
      select: ["PK", "SK"],
      limit: 50,
      order: "desc",
      consistent: false,
      cursor: null,
      count: false,
    },
  });
  await api.POST("/v1/models/{model}/query", {
    params: { path: model },
    body: {
      key: [
        { attr: "PK", op: "=", value: "USER#1" },
        { attr: "SK", op: "between", value: ["A", "Z"] },
      ],
      cursor: page.data?.cursor ?? null,
    },
  });
  await api.POST("/v1/models/{model}/scan", {
    params: { path: model },
    body: { filter: listCondition, limit: 10, segments: 4, count: true },
  });

  // Batches and transactions.
  await api.POST("/v1/models/{model}/batch-get", {
    params: { path: model },
    body: { keys: [{ PK: "USER#1", SK: "PROFILE" }], select: ["nickname"], consistent: true },
  });
  await api.POST("/v1/models/{model}/batch-write", {
    params: { path: model },
    body: { put: [{ PK: "USER#2", SK: "PROFILE" }], delete: [{ PK: "USER#3", SK: "PROFILE" }] },
  });
  await api.POST("/v1/transactions/write", {
    body: {
      client_token: "token-1",
      retry_conflicts: true,
      items: [
        { op: "create", model: "User", item: { PK: "USER#4", SK: "PROFILE" } },
        { op: "put", model: "User", item: { PK: "USER#5", SK: "PROFILE" }, expected_version: 0 },
        {
          op: "update",
          model: "User",
          key: { PK: "USER#1", SK: "PROFILE" },
          set: { nickname: "ed" },
          upsert: true,
        },
        { op: "delete", model: "User", key: { PK: "USER#6", SK: "PROFILE" } },
        {
          op: "check",
          model: "User",
          key: { PK: "USER#7", SK: "PROFILE" },
          condition: { attr: "PK", op: "exists" },
        },
      ],
    },
  });
  await api.POST("/v1/transactions/get", {
    body: { items: [{ model: "User", key: { PK: "USER#1", SK: "PROFILE" }, select: ["PK"] }] },
  });

  // Fault injection (only with --enable-fault-injection).
  await api.POST("/v1/_faults", {
    body: { op: "PutItem", model: "User", error: "Unprocessed", times: 2, unprocessed: 1 },
  });
  await api.GET("/v1/_faults");
  await api.DELETE("/v1/_faults");

  // The job ledger.
  await api.PUT("/v1/jobs/table");
  await api.DELETE("/v1/jobs/table");
  const job = await api.POST("/v1/jobs", {
    body: { job_id: "job-1", tenant_id: "acme", status: "PENDING", ttl_seconds: 3600 },
  });
  const id = { id: job.data?.job_id ?? "job-1" };
  await api.GET("/v1/jobs", {
    params: { query: { tenant_id: "acme", status: "RUNNING", limit: 10, order: "desc" } },
  });
  await api.GET("/v1/jobs/{id}", { params: { path: id } });
  await api.POST("/v1/jobs/{id}/transition", {
    params: { path: id },
    body: { expected_version: job.data?.version ?? 1, to: "RUNNING", from: "PENDING" },
  });
  await api.GET("/v1/jobs/{id}/records", {
    params: { path: id, query: { status: "FAILED", limit: 100, cursor: "" } },
  });
  await api.PUT("/v1/jobs/{id}/records/{rid}", {
    params: { path: { ...id, rid: "r-1" } },
    body: {
      status: "FAILED",
      error: { type: "Http", code: "E42", message: "boom", retryable: false, fields: { a: 1 } },
      ttl_seconds: 600,
    },
  });
  await api.GET("/v1/jobs/{id}/records/{rid}", { params: { path: { ...id, rid: "r-1" } } });
  await api.POST("/v1/jobs/{id}/lease", {
    params: { path: id },
    body: { owner: "worker-1", duration_seconds: 30 },
  });
  await api.POST("/v1/jobs/{id}/lease/refresh", {
    params: { path: id },
    body: { owner: "worker-1", duration_seconds: 30 },
  });
  await api.DELETE("/v1/jobs/{id}/lease", { params: { path: id, query: { owner: "worker-1" } } });
  const sem = { scope: "imports", subject: "acme" };
  await api.GET("/v1/semaphores/{scope}/{subject}", { params: { path: sem } });
  await api.POST("/v1/semaphores/{scope}/{subject}/lease", {
    params: { path: sem },
    body: { owner: "worker-1", limit: 4, duration_seconds: 30 },
  });
  await api.POST("/v1/semaphores/{scope}/{subject}/lease/refresh", {
    params: { path: sem },
    body: { owner: "worker-1", slot: 0, duration_seconds: 30 },
  });
  await api.DELETE("/v1/semaphores/{scope}/{subject}/lease", {
    params: { path: sem, query: { owner: "worker-1", slot: 0 } },
  });
  await api.POST("/v1/jobs/{id}/requests/{key}", {
    params: { path: { ...id, key: "charge-1" } },
    body: { ttl_seconds: 86400 },
  });
  await api.POST("/v1/jobs/{id}/requests/{key}/complete", {
    params: { path: { ...id, key: "charge-1" } },
    body: { result: { charged: 42 }, error: { code: "None" } },
  });
  void names;
}
