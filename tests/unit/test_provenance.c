/* SPDX-License-Identifier: Apache-2.0 */
/* test_provenance.c -- check suite for the release-state deploy-authority
 * check (orm/provenance.h): accepted evidence, shape errors
 * (ValidationError) and refused evidence (RejectedDeployAuthorityEvidence). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "orm/provenance.h"
#include "value/json_exact.h"

/* The accepted item of scenario p0/09 (TableTheory's contract fixture). */
static const char *const GOOD =
    "{\"PK\":\"RELEASE#service-a\",\"SK\":\"ACTUAL\",\"status\":\"active\","
    "\"provenance\":{\"mode\":\"native\",\"system\":\"release-control-plane\","
    "\"kind\":\"operator_command\",\"ref\":\"operator://deploy/service-a/rel_001\","
    "\"observed_at\":\"2026-04-24T19:00:00Z\",\"recorded_at\":\"2026-04-24T19:00:01Z\","
    "\"evidence\":[{\"kind\":\"operator_command\",\"source\":\"release-control-plane\","
    "\"ref\":\"operator://deploy/service-a/rel_001\",\"observed_at\":\"2026-04-24T19:00:00Z\"}]},"
    "\"confidence\":{\"level\":\"high\",\"reasons\":[\"operator_command_authority\"]}}";

static json_t *parse(const char *text) {
  json_t *j = NULL;
  struct tt_error err = {0};
  ck_assert_msg(tt_json_parse(text, strlen(text), NULL, &j, &err) == 0, "test JSON: %s",
                err.message);
  return j;
}

static json_t *good(void) { return parse(GOOD); }

static json_t *prov(json_t *item) { return json_object_get(item, "provenance"); }
static json_t *evidence0(json_t *item) {
  return json_array_get(json_object_get(prov(item), "evidence"), 0);
}

/* Runs the check and returns the error code (TT_OK when accepted). */
static enum tt_err_code check(json_t *item, const char *field, struct tt_error *err) {
  tt_error_clear(err);
  int rc = tt_orm_provenance_check(item, field, err);
  ck_assert_int_eq(rc, err->code == TT_OK ? 0 : -1);
  json_decref(item);
  return err->code;
}

START_TEST(accepts_consistent_high_confidence) {
  struct tt_error err;
  ck_assert_int_eq(check(good(), NULL, &err), TT_OK);
  /* Neither member: nothing to check. */
  ck_assert_int_eq(check(parse("{\"PK\":\"a\",\"SK\":\"b\"}"), NULL, &err), TT_OK);
  /* Repeated identical evidence, optional strings, an offset time with a
   * fraction, and a digest that matches. */
  json_t *j = good();
  json_t *e = evidence0(j);
  json_object_set_new(e, "digest", tt_json_string_new("sha256:1", 8));
  json_object_set_new(prov(j), "digest", tt_json_string_new("sha256:1", 8));
  json_object_set_new(prov(j), "commit_sha", tt_json_string_new("abc", 3));
  json_object_set_new(prov(j), "observed_at", tt_json_string_new("2024-02-29T23:59:59.5+05:30", 27));
  json_array_append_new(json_object_get(prov(j), "evidence"), json_deep_copy(e));
  ck_assert_int_eq(check(j, NULL, &err), TT_OK);
  /* Each source/kind pair of the vocabulary with its reason. */
  static const char *const pairs[][3] = {
      {"factory_batch_manifest", "partner-factory", "unique_factory_manifest_match"},
      {"codepipeline_execution", "service-ci", "codepipeline_execution_authority"},
      {"submodule_pin", "service-ci", "unique_submodule_pin_match"}};
  for (size_t i = 0; i < 3; i++) {
    j = good();
    json_object_set_new(prov(j), "kind", json_string(pairs[i][0]));
    json_object_set_new(prov(j), "system", json_string(pairs[i][1]));
    json_object_set_new(evidence0(j), "kind", json_string(pairs[i][0]));
    json_object_set_new(evidence0(j), "source", json_string(pairs[i][1]));
    json_t *reasons = json_object_get(json_object_get(j, "confidence"), "reasons");
    json_array_set_new(reasons, 0, json_string(pairs[i][2]));
    ck_assert_int_eq(check(j, NULL, &err), TT_OK);
  }
}
END_TEST

START_TEST(rejects_scenario_conflicting_low_confidence) {
  /* The refused item of scenario p0/09. */
  struct tt_error err;
  json_t *j = parse(
      "{\"PK\":\"RELEASE#service-b\",\"SK\":\"ACTUAL\",\"provenance\":{\"mode\":\"imported\","
      "\"system\":\"partner-factory\",\"kind\":\"factory_batch_manifest\","
      "\"ref\":\"s3://factory/manifests/ambiguous.json\",\"observed_at\":\"2026-04-24T19:10:00Z\","
      "\"recorded_at\":\"2026-04-24T19:10:01Z\",\"evidence\":["
      "{\"kind\":\"factory_batch_manifest\",\"source\":\"partner-factory\","
      "\"ref\":\"s3://factory/manifests/a.json\",\"observed_at\":\"2026-04-24T19:09:59Z\"},"
      "{\"kind\":\"submodule_pin\",\"source\":\"service-ci\","
      "\"ref\":\"https://github.com/acme/service-b/tree/conflicting\","
      "\"observed_at\":\"2026-04-24T19:09:59Z\"}]},"
      "\"confidence\":{\"level\":\"low\",\"reasons\":[\"conflicting_evidence\"]}}");
  ck_assert_int_eq(check(j, "items[0].item", &err), TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE);
  ck_assert_str_eq(err.field, "items[0].item.provenance.evidence[1]");
  ck_assert_ptr_nonnull(strstr(err.message, "conflicting"));
}
END_TEST

START_TEST(rejects_evidence_that_cannot_authorize) {
  struct tt_error err;
  json_t *j = good();
  json_object_set_new(json_object_get(j, "confidence"), "level", json_string("medium"));
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE);
  ck_assert_str_eq(err.field, "confidence.level");

  j = good();
  json_array_set_new(json_object_get(json_object_get(j, "confidence"), "reasons"), 0,
                     json_string("unique_submodule_pin_match"));
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE);
  ck_assert_str_eq(err.field, "confidence.reasons");

  j = good(); /* two reasons, the right one among them */
  json_array_append_new(json_object_get(json_object_get(j, "confidence"), "reasons"),
                        json_string("extra"));
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE);

  j = good();
  json_array_clear(json_object_get(prov(j), "evidence"));
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE);
  ck_assert_str_eq(err.field, "provenance.evidence");

  j = good(); /* a pair outside the vocabulary */
  json_object_set_new(evidence0(j), "source", json_string("service-ci"));
  json_object_set_new(prov(j), "system", json_string("service-ci"));
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE);

  j = good(); /* evidence about another artifact */
  json_object_set_new(prov(j), "ref", json_string("operator://deploy/service-a/rel_999"));
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE);
  ck_assert_str_eq(err.field, "provenance");

  j = good(); /* a provenance digest the evidence does not carry */
  json_object_set_new(prov(j), "digest", json_string("sha256:1"));
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE);
  ck_assert_str_eq(err.field, "provenance.digest");

  j = good(); /* same artifact, another digest: conflicting */
  json_t *e2 = json_deep_copy(evidence0(j));
  json_object_set_new(e2, "digest", json_string("sha256:2"));
  json_array_append_new(json_object_get(prov(j), "evidence"), e2);
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_REJECTED_DEPLOY_AUTHORITY_EVIDENCE);
  ck_assert_str_eq(err.field, "provenance.evidence[1]");
}
END_TEST

START_TEST(shape_errors_are_validation) {
  struct tt_error err;
  json_t *j = good();
  json_object_del(j, "confidence");
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, "confidence");

  j = good();
  json_object_set_new(j, "provenance", json_string("x"));
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_VALIDATION);

  j = good(); /* free-form notes are not part of the vocabulary */
  json_object_set_new(prov(j), "notes", json_string("human note"));
  ck_assert_int_eq(check(j, "item", &err), TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, "item.provenance.notes");

  j = good();
  json_object_set_new(prov(j), "mode", json_string("guessed"));
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, "provenance.mode");

  j = good();
  json_object_set_new(prov(j), "ref", json_string(""));
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_VALIDATION);

  static const char *const bad_times[] = {"2026-04-24 19:00:00Z", "2026-02-29T19:00:00Z",
                                          "2026-04-24T24:00:00Z", "2026-04-24T19:00:60Z",
                                          "2026-04-24T19:00:00",  "2026-04-24T19:00:00.Z",
                                          "2026-04-24T19:00:00+0530", "2026-13-01T00:00:00Z"};
  for (size_t i = 0; i < sizeof(bad_times) / sizeof(bad_times[0]); i++) {
    j = good();
    json_object_set_new(evidence0(j), "observed_at", json_string(bad_times[i]));
    ck_assert_msg(check(j, NULL, &err) == TT_ERR_VALIDATION, "%s", bad_times[i]);
    ck_assert_str_eq(err.field, "provenance.evidence[0].observed_at");
  }

  j = good();
  json_object_set_new(prov(j), "evidence", json_object());
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_VALIDATION);

  j = good(); /* a number where a string belongs */
  json_object_set_new(evidence0(j), "digest", tt_json_number_new("7", 1));
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_VALIDATION);

  j = good();
  json_object_set_new(json_object_get(j, "confidence"), "reasons", json_string("x"));
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_VALIDATION);

  j = good();
  json_object_set_new(json_object_get(j, "confidence"), "score", json_integer(1));
  ck_assert_int_eq(check(j, NULL, &err), TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, "confidence.score");
}
END_TEST

static Suite *provenance_suite(void) {
  Suite *s = suite_create("provenance");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, accepts_consistent_high_confidence);
  tcase_add_test(tc, rejects_scenario_conflicting_low_confidence);
  tcase_add_test(tc, rejects_evidence_that_cannot_authorize);
  tcase_add_test(tc, shape_errors_are_validation);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(provenance_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
