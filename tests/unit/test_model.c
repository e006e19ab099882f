/* SPDX-License-Identifier: Apache-2.0 */
/* test_model.c -- check suite for DMS parsing, validation, the canonical form and the registry. */
#include <check.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/dms_parse.h"
#include "model/model.h"
#include "model/registry.h"

/* Tests run with the data directory as the current directory, so that
 * file names in messages are short and known ("dms/bad/x.yml"). */

static struct tt_model_registry *load_dir(const char *dir) {
  struct tt_model_registry *r = tt_model_registry_new();
  struct tt_error err = {0};
  ck_assert_ptr_nonnull(r);
  ck_assert_msg(tt_model_registry_load_path(r, dir, &err) == 0, "%s: %s", dir, err.message);
  return r;
}

static struct tt_model *model_from_text(const char *json_text, struct tt_error *err) {
  json_error_t jerr;
  json_t *obj = json_loads(json_text, 0, &jerr);
  ck_assert_msg(obj != NULL, "test JSON: %s", jerr.text);
  struct tt_model *m = NULL;
  int rc = tt_model_from_json(obj, NULL, &m, err);
  json_decref(obj);
  ck_assert_int_eq(rc == 0, m != NULL);
  return m;
}

/* --- fixtures --------------------------------------------------------------- */

struct expect {
  const char *name;
  const char *table;
  size_t n_attrs;
  const char *pk;
  const char *sk;
  size_t n_indexes;
  enum tt_model_naming naming;
};

static const struct expect v01[] = {
    {"EncryptedRecord", "encrypted_records_contract", 3, "PK", "SK", 0, TT_NAMING_NONE},
    {"NumberPrecision", "number_precision_contract", 4, "PK", "SK", 0, TT_NAMING_CAMEL_CASE},
    {"Order", "orders_contract", 8, "PK", "SK", 1, TT_NAMING_CAMEL_CASE},
    {"ReleaseStateActual", "release_state_contract", 9, "PK", "SK", 0, TT_NAMING_CAMEL_CASE},
    {"ReleaseStateEvent", "release_state_contract", 8, "PK", "SK", 0, TT_NAMING_CAMEL_CASE},
    {"SnakeCaseRecord", "snake_case_contract", 4, "pk", "sk", 0, TT_NAMING_SNAKE_CASE},
    {"TypeMatrix", "type_matrix_contract", 12, "PK", "SK", 0, TT_NAMING_CAMEL_CASE},
    {"User", "users_contract", 9, "PK", "SK", 1, TT_NAMING_CAMEL_CASE},
};

static const struct expect v02[] = {
    {"EncryptedRecord", "encrypted_records_contract", 3, "PK", "SK", 0, TT_NAMING_NONE},
    {"NumberPrecision", "number_precision_contract", 4, "PK", "SK", 0, TT_NAMING_CAMEL_CASE},
    {"Order", "orders_contract", 8, "PK", "SK", 1, TT_NAMING_CAMEL_CASE},
    {"ReleaseStateActual", "release_state_contract", 9, "PK", "SK", 0, TT_NAMING_CAMEL_CASE},
    {"ReleaseStateEvent", "release_state_contract", 8, "PK", "SK", 0, TT_NAMING_CAMEL_CASE},
    {"SnakeCaseRecord", "snake_case_contract", 4, "pk", "sk", 0, TT_NAMING_SNAKE_CASE},
    {"StructuredProfileUser", "users_contract", 4, "PK", "SK", 0, TT_NAMING_CAMEL_CASE},
    {"TypeMatrix", "type_matrix_contract", 12, "PK", "SK", 0, TT_NAMING_CAMEL_CASE},
    {"User", "users_contract", 10, "PK", "SK", 1, TT_NAMING_CAMEL_CASE},
};

static void check_fixture_dir(const char *dir, const struct expect *exp, size_t n,
                              enum tt_dms_version ver) {
  struct tt_model_registry *r = load_dir(dir);
  ck_assert_uint_eq(tt_model_registry_count(r), n);
  for (size_t i = 0; i < n; i++) {
    const struct tt_model *m = tt_model_registry_at(r, i);
    /* Iteration is in name order, which is the order of the table. */
    ck_assert_str_eq(m->name, exp[i].name);
    ck_assert_ptr_eq(tt_model_registry_get(r, exp[i].name), m);
    ck_assert_str_eq(m->table, exp[i].table);
    ck_assert_uint_eq(m->n_attrs, exp[i].n_attrs);
    ck_assert_str_eq(tt_model_pk(m)->name, exp[i].pk);
    ck_assert_str_eq(tt_model_sk(m)->name, exp[i].sk);
    ck_assert_uint_eq(m->n_indexes, exp[i].n_indexes);
    ck_assert_int_eq(m->naming, exp[i].naming);
    ck_assert_int_eq(m->dms_version, ver);
    ck_assert_str_eq(m->namespace_name, strncmp(m->name, "ReleaseState", 12) == 0
                                            ? "theorydb.contract.release_state"
                                            : "theorydb.contract");
    ck_assert_ptr_nonnull(m->source);
  }
  tt_model_registry_free(r);
}

START_TEST(fixtures_v01_load) {
  check_fixture_dir("dms/v0.1/models", v01, sizeof(v01) / sizeof(v01[0]), TT_DMS_V0_1);
}
END_TEST

START_TEST(fixtures_v02_load) {
  check_fixture_dir("dms/v0.2/models", v02, sizeof(v02) / sizeof(v02[0]), TT_DMS_V0_2);
}
END_TEST

START_TEST(fixture_order_details) {
  struct tt_model_registry *r = load_dir("dms/v0.2/models/order.yml");
  const struct tt_model *m = tt_model_registry_get(r, "Order");
  ck_assert_ptr_nonnull(m);
  ck_assert_str_eq(m->source, "dms/v0.2/models/order.yml");
  ck_assert_str_eq(tt_model_lifecycle(m, TT_LC_CREATED_AT)->name, "createdAt");
  ck_assert_str_eq(tt_model_lifecycle(m, TT_LC_UPDATED_AT)->name, "updatedAt");
  ck_assert_str_eq(tt_model_lifecycle(m, TT_LC_VERSION)->name, "version");
  ck_assert_str_eq(tt_model_lifecycle(m, TT_LC_TTL)->name, "ttl");
  const struct tt_model_attr *ttl = tt_model_attr_find(m, "ttl", 3);
  ck_assert_int_eq(ttl->type, TT_AV_N);
  ck_assert_int_eq(ttl->format, TT_FORMAT_UNIX_SECONDS);
  ck_assert(ttl->optional && ttl->omit_empty && !ttl->required);
  ck_assert_uint_eq(ttl->roles, TT_ROLE_TTL);
  const struct tt_model_attr *pk = tt_model_attr_find(m, "PK", 2);
  ck_assert(pk->required && pk->roles == TT_ROLE_PK && tt_model_attr_is_key(m, pk));
  ck_assert(!tt_model_attr_is_key(m, ttl));
  ck_assert_ptr_null(tt_model_attr_find(m, "P", 1));
  ck_assert_ptr_null(tt_model_attr_find(m, "PKX", 3));
  ck_assert_ptr_null(tt_model_attr_find(m, "nickname", 8));

  /* The merge walk finds what the binary search finds, for every sorted
   * subset of the names and near misses around them. */
  const char *probes[] = {"",       "A",         "P",          "PK",     "PKX",
                          "S",      "SK",        "a",          "am",     "amount",
                          "c",      "createdAt", "createdAtX", "status", "tta",
                          "ttl",    "updatedAt", "version",    "zz"}; /* in byte order */
  size_t np = sizeof(probes) / sizeof(probes[0]);
  for (unsigned mask = 0; mask < (1u << 10); mask++) {
    size_t pos = 0;
    unsigned bits = mask * 2654435761u; /* spread the subsets over all probes */
    for (size_t i = 0; i < np; i++) {
      if (i > 0)
        ck_assert_int_lt(strcmp(probes[i - 1], probes[i]), 0);
      if (!((bits >> (i % 32)) & 1))
        continue;
      size_t n = strlen(probes[i]);
      const struct tt_model_attr *want = tt_model_attr_find(m, probes[i], n);
      ck_assert_ptr_eq(tt_model_attr_seek(m, probes[i], n, &pos), want);
    }
  }
  /* Each attribute's JSON key is its quoted name and a colon. */
  ck_assert_uint_eq(pk->json_key_len, 5);
  ck_assert_int_eq(memcmp(pk->json_key, "\"PK\":", 5), 0);

  const struct tt_model_index *ix = tt_model_index_find(m, "gsi-status");
  ck_assert_ptr_nonnull(ix);
  ck_assert_ptr_null(tt_model_index_find(m, "gsi-email"));
  ck_assert_int_eq(ix->kind, TT_INDEX_GSI);
  ck_assert_str_eq(ix->partition->name, "status");
  ck_assert_str_eq(ix->sort->name, "createdAt");
  ck_assert_int_eq(ix->projection, TT_PROJECTION_INCLUDE);
  ck_assert_uint_eq(ix->n_include, 1);
  ck_assert_str_eq(ix->include[0], "amount");
  tt_model_registry_free(r);
}
END_TEST

START_TEST(fixture_flags) {
  struct tt_model_registry *r = load_dir("dms/v0.2/models");
  const struct tt_model *ra = tt_model_registry_get(r, "ReleaseStateActual");
  const struct tt_model *re = tt_model_registry_get(r, "ReleaseStateEvent");
  ck_assert(!ra->write_once && re->write_once);
  ck_assert(tt_model_attr_find(ra, "pinnedReleaseId", 15)->is_protected);
  ck_assert(!tt_model_attr_find(ra, "status", 6)->is_protected);
  ck_assert(tt_model_attr_find(ra, "provenance", 10)->json);
  ck_assert_ptr_null(tt_model_lifecycle(re, TT_LC_VERSION));
  ck_assert_str_eq(tt_model_lifecycle(re, TT_LC_TTL)->name, "ttl");

  const struct tt_model *er = tt_model_registry_get(r, "EncryptedRecord");
  ck_assert(tt_model_attr_find(er, "secret", 6)->encrypted);
  ck_assert(!tt_model_attr_find(er, "PK", 2)->encrypted);

  const struct tt_model *tm = tt_model_registry_get(r, "TypeMatrix");
  static const struct {
    const char *name;
    enum tt_av_type type;
  } types[] = {{"numberSet", TT_AV_NS}, {"binaryBlob", TT_AV_B}, {"binarySet", TT_AV_BS},
               {"flag", TT_AV_BOOL},    {"nothing", TT_AV_NULL}, {"items", TT_AV_L},
               {"metadata", TT_AV_M},   {"optionalString", TT_AV_S}};
  for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
    ck_assert_int_eq(tt_model_attr_find(tm, types[i].name, strlen(types[i].name))->type,
                     types[i].type);

  const struct tt_model *np = tt_model_registry_get(r, "NumberPrecision");
  ck_assert_int_eq(tt_model_attr_find(np, "largeInteger", 12)->format,
                   TT_FORMAT_DECIMAL_STRING);

  const struct tt_model *u = tt_model_registry_get(r, "User");
  const struct tt_model_attr *profile = tt_model_attr_find(u, "profile", 7);
  ck_assert(profile->json && profile->type == TT_AV_M && profile->omit_empty);
  const struct tt_model_index *gsi = tt_model_index_find(u, "gsi-email");
  ck_assert_int_eq(gsi->projection, TT_PROJECTION_KEYS_ONLY);
  ck_assert_ptr_null(gsi->sort);

  const struct tt_model *sp = tt_model_registry_get(r, "StructuredProfileUser");
  ck_assert_ptr_null(tt_model_lifecycle(sp, TT_LC_CREATED_AT));
  ck_assert_str_eq(tt_model_lifecycle(sp, TT_LC_VERSION)->name, "version");
  ck_assert(!tt_model_attr_find(sp, "profile", 7)->json);
  tt_model_registry_free(r);
}
END_TEST

/* The v0.1 and v0.2 User differ by the profile attribute and the version;
 * the other models differ only by dms_version. */
START_TEST(fixture_versions_differ) {
  struct tt_model_registry *a = load_dir("dms/v0.1/models");
  struct tt_model_registry *b = load_dir("dms/v0.2/models");
  const struct tt_model *o1 = tt_model_registry_get(a, "Order");
  const struct tt_model *o2 = tt_model_registry_get(b, "Order");
  ck_assert(!tt_model_equal(o1, o2));
  json_t *j1 = tt_model_to_json(o1), *j2 = tt_model_to_json(o2);
  ck_assert_str_eq(json_string_value(json_object_get(j1, "dms_version")), "0.1");
  json_object_set_new(j1, "dms_version", json_string("0.2"));
  ck_assert(json_equal(j1, j2));
  json_decref(j1);
  json_decref(j2);
  tt_model_registry_free(a);
  tt_model_registry_free(b);
}
END_TEST

START_TEST(json_file_equals_yaml) {
  struct tt_model_registry *y = load_dir("dms/v0.2/models/user.yml");
  struct tt_model_registry *j = load_dir("dms/json/user.json");
  ck_assert(tt_model_equal(tt_model_registry_get(y, "User"), tt_model_registry_get(j, "User")));
  ck_assert_str_eq(tt_model_registry_get(j, "User")->source, "dms/json/user.json");
  tt_model_registry_free(y);
  tt_model_registry_free(j);
}
END_TEST

/* Every fixture model survives to_json -> from_json unchanged. */
START_TEST(canonical_round_trip) {
  static const char *const dirs[] = {"dms/v0.1/models", "dms/v0.2/models", "dms/multi"};
  for (size_t d = 0; d < 3; d++) {
    struct tt_model_registry *r = load_dir(dirs[d]);
    for (size_t i = 0; i < tt_model_registry_count(r); i++) {
      const struct tt_model *m = tt_model_registry_at(r, i);
      json_t *j = tt_model_to_json(m);
      struct tt_model *back = NULL;
      struct tt_error err = {0};
      ck_assert_msg(tt_model_from_json(j, NULL, &back, &err) == 0, "%s: %s", m->name,
                    err.message);
      ck_assert_msg(tt_model_equal(m, back), "%s", m->name);
      json_t *j2 = tt_model_to_json(back);
      ck_assert(json_equal(j, j2));
      ck_assert_ptr_null(back->source);
      json_decref(j2);
      json_decref(j);
      tt_model_unref(back);
    }
    tt_model_registry_free(r);
  }
}
END_TEST

/* The canonical form of a known model, member by member. */
START_TEST(canonical_form_known) {
  struct tt_model_registry *r = load_dir("dms/v0.2/models/order.yml");
  json_t *j = tt_model_to_json(tt_model_registry_get(r, "Order"));
  char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
  ck_assert_str_eq(
      s, "{\"attributes\":["
         "{\"attribute\":\"PK\",\"required\":true,\"roles\":[\"pk\"],\"type\":\"S\"},"
         "{\"attribute\":\"SK\",\"required\":true,\"roles\":[\"sk\"],\"type\":\"S\"},"
         "{\"attribute\":\"amount\",\"omit_empty\":true,\"optional\":true,\"type\":\"N\"},"
         "{\"attribute\":\"createdAt\",\"format\":\"rfc3339nano\",\"roles\":[\"created_at\"],"
         "\"type\":\"S\"},"
         "{\"attribute\":\"status\",\"omit_empty\":true,\"optional\":true,\"type\":\"S\"},"
         "{\"attribute\":\"ttl\",\"format\":\"unix_seconds\",\"omit_empty\":true,\"optional\":"
         "true,\"roles\":[\"ttl\"],\"type\":\"N\"},"
         "{\"attribute\":\"updatedAt\",\"format\":\"rfc3339nano\",\"roles\":[\"updated_at\"],"
         "\"type\":\"S\"},"
         "{\"attribute\":\"version\",\"format\":\"int\",\"roles\":[\"version\"],\"type\":\"N\"}],"
         "\"dms_version\":\"0.2\","
         "\"indexes\":[{\"name\":\"gsi-status\",\"partition\":{\"attribute\":\"status\",\"type\":"
         "\"S\"},\"projection\":{\"fields\":[\"amount\"],\"type\":\"INCLUDE\"},\"sort\":{"
         "\"attribute\":\"createdAt\",\"type\":\"S\"},\"type\":\"GSI\"}],"
         "\"keys\":{\"partition\":{\"attribute\":\"PK\",\"type\":\"S\"},\"sort\":{\"attribute\":"
         "\"SK\",\"type\":\"S\"}},"
         "\"name\":\"Order\",\"namespace\":\"theorydb.contract\",\"naming\":{\"convention\":"
         "\"camelCase\"},\"table\":{\"name\":\"orders_contract\"},"
         "\"write_policy\":{\"mode\":\"mutable\",\"protected_attributes\":[]}}");
  free(s);
  json_decref(j);
  tt_model_registry_free(r);
}
END_TEST

/* --- broken models ------------------------------------------------------------ */

static const struct {
  const char *file;
  const char *field;
  const char *message; /* after "<file>: " */
} bad_cases[] = {
    {"dms/bad/anchor.yml", "",
     "line 10 column 9: YAML anchors (&name) are not supported in DMS files; write the value out"},
    {"dms/bad/attribute-bracket.yml", "models[0].attributes[2].attribute",
     "model User: attribute \"tags[0]\": a name may not contain '[' (paths use '.' and '[n]' "
     "to reach nested values, so the attribute could not be selected, set or filtered)"},
    {"dms/bad/attribute-dot.yml", "models[0].attributes[2].attribute",
     "model User: attribute \"profile.email\": a name may not contain '.' (paths use '.' and "
     "'[n]' to reach nested values, so the attribute could not be selected, set or filtered)"},
    {"dms/bad/bad-json.json", "",
     "line 1 column 52: JSON syntax error: string or '}' expected near ','"},
    {"dms/bad/bad-version.yml", "dms_version",
     "unsupported dms_version \"0.3\" (this daemon reads \"0.1\" and \"0.2\")"},
    {"dms/bad/bool-as-string.yml", "models[0].attributes[2].optional",
     "model User: attribute \"email\": optional must be true or false (unquoted)"},
    {"dms/bad/duplicate-attribute.yml", "models[0].attributes[3].attribute",
     "model User: attribute \"email\" is declared twice (attributes[2] and [3])"},
    {"dms/bad/duplicate-key.yml", "",
     "line 12 column 48: duplicate key \"type\""},
    {"dms/bad/duplicate-model.yml", "models[1].name",
     "model User is defined twice (models[0] and models[1])"},
    {"dms/bad/empty.yml", "",
     "the file is empty (expected a DMS document with dms_version and models)"},
    {"dms/bad/encrypted-key.yml", "models[0].keys.partition.attribute",
     "model User: keys.partition: attribute \"PK\" is encrypted and cannot be a key"},
    {"dms/bad/encrypted-unique.yml", "models[0].attributes[2].tags.unique",
     "model User: attribute \"email\": an encrypted attribute cannot be unique (its guard item "
     "would be keyed by the plain value)"},
    {"dms/bad/encryption-version.yml", "models[0].attributes[2].encryption.v",
     "model User: attribute \"secret\": encryption.v must be 1 (the only envelope version)"},
    {"dms/bad/format-type.yml", "models[0].attributes[2].format",
     "model User: attribute \"createdAt\": format rfc3339nano needs type S, not N"},
    {"dms/bad/include-without-fields.yml", "models[0].indexes[0].projection.fields",
     "model User: index \"gsi-status\": projection type INCLUDE needs a non-empty fields list"},
    {"dms/bad/index-role.yml", "models[0].attributes[2].roles[0]",
     "model User: attribute \"status\": role \"index_pk:gsi-missing\" names an undeclared index"},
    {"dms/bad/index-undeclared.yml", "models[0].indexes[0].partition.attribute",
     "model User: index \"gsi-email\": partition: attribute \"emailHash\" is not declared in attributes"},
    {"dms/bad/json-on-set.yml", "models[0].attributes[2].json",
     "model User: attribute \"labels\": json needs type S, N, BOOL, NULL, L or M, not SS"},
    {"dms/bad/key-type-invalid.yml", "models[0].keys.sort.type",
     "model User: keys.sort: type must be S, N or B, not \"BOOL\""},
    {"dms/bad/key-type-mismatch.yml", "models[0].keys.partition.type",
     "model User: keys.partition: attribute \"PK\" is declared with type S, not N"},
    {"dms/bad/lifecycle-on-key.yml", "models[0].attributes[1].roles",
     "model User: attribute \"SK\": a key attribute cannot have role created_at"},
    {"dms/bad/lsi-partition.yml", "models[0].indexes[0].partition",
     "model User: index \"lsi-rank\": a local secondary index must use the table's partition key \"PK\""},
    {"dms/bad/missing-version.yml", "dms_version",
     "dms_version is required (\"0.1\" or \"0.2\")"},
    {"dms/bad/naming-violation.yml", "models[0].attributes[2].attribute",
     "model User: attribute \"email_hash\": name does not follow the camelCase naming convention"},
    {"dms/bad/no-models.yml", "models",
     "models must list at least one model"},
    {"dms/bad/not-a-map.yml", "",
     "a DMS document must be a map with dms_version and models"},
    {"dms/bad/pascal-case.yml", "models[0].naming.convention",
     "model User: naming.convention pascalCase is not a DMS convention (camelCase, snake_case or dynamorm)"},
    {"dms/bad/pk-undeclared.yml", "models[0].keys.partition.attribute",
     "model User: keys.partition: attribute \"PK\" is not declared in attributes"},
    {"dms/bad/projection-type.yml", "models[0].indexes[0].projection.type",
     "model User: index \"gsi-status\": unknown projection type \"SOME\" (ALL, KEYS_ONLY or INCLUDE)"},
    {"dms/bad/protected-undeclared.yml", "models[0].write_policy.protected_attributes[0]",
     "model User: write_policy: protected attribute \"pinnedReleaseId\" is not declared"},
    {"dms/bad/required-optional.yml", "models[0].attributes[2].optional",
     "model User: attribute \"email\": cannot be both required and optional"},
    {"dms/bad/role-twice.yml", "models[0].attributes[3].roles",
     "model User: attribute \"created\": role created_at is already held by attribute \"createdAt\""},
    {"dms/bad/role-type.yml", "models[0].attributes[2].roles",
     "model User: attribute \"version\": role version needs type N, not S"},
    {"dms/bad/sort-role-no-sort.yml", "models[0].attributes[1].roles",
     "model Thing: attribute \"at\": has role sk but the model has no keys.sort"},
    {"dms/bad/syntax.yml", "",
     "line 13 column 5: YAML syntax error: did not find expected ',' or '}' while parsing a flow mapping"},
    {"dms/bad/table-name.yml", "models[0].table.name",
     "model User: table.name must be 3-255 characters of A-Z a-z 0-9 _ . -"},
    {"dms/bad/tag.yml", "",
     "line 12 column 9: YAML tag \"tag:yaml.org,2002:python/object:os.system\" is not supported in DMS files (only !!str, !!map, !!seq)"},
    {"dms/bad/unknown-field.yml", "models[0].attributes[2].omitempty",
     "model User: attribute \"nickname\": unknown field \"omitempty\""},
    {"dms/bad/unknown-type.yml", "models[0].attributes[2].type",
     "model User: attribute \"email\": unknown type \"X\" (S, N, B, BOOL, NULL, SS, NS, BS, M or L)"},
    {"dms/bad/version-number.json", "dms_version",
     "dms_version must be a quoted string: \"0.1\" or \"0.2\""},
};

START_TEST(bad_models) {
  const char *file = bad_cases[_i].file;
  struct tt_model_registry *r = tt_model_registry_new();
  struct tt_error err = {0};
  ck_assert_int_eq(tt_model_registry_load_path(r, file, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  char want[512];
  snprintf(want, sizeof(want), "%s: %s", file, bad_cases[_i].message);
  ck_assert_str_eq(err.message, want);
  ck_assert_str_eq(err.field, bad_cases[_i].field);
  ck_assert_uint_eq(tt_model_registry_count(r), 0);
  tt_model_registry_free(r);
}
END_TEST

/* Every file in dms/bad has a case above, so a new broken model cannot be
 * added without saying what it must produce. */
START_TEST(bad_models_all_listed) {
  DIR *d = opendir("dms/bad");
  ck_assert_ptr_nonnull(d);
  struct dirent *e;
  size_t files = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    char path[300];
    snprintf(path, sizeof(path), "dms/bad/%s", e->d_name);
    bool found = false;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++)
      if (strcmp(bad_cases[i].file, path) == 0)
        found = true;
    ck_assert_msg(found, "%s has no expected message", path);
    files++;
  }
  closedir(d);
  ck_assert_uint_eq(files, sizeof(bad_cases) / sizeof(bad_cases[0]));
}
END_TEST

START_TEST(from_json_messages) {
  struct tt_error err = {0};
  /* Run-time registration: no file, so messages start at the model. */
  struct tt_model *m = model_from_text(
      "{\"name\":\"User\",\"table\":{\"name\":\"users\"},"
      "\"keys\":{\"partition\":{\"attribute\":\"PK\",\"type\":\"S\"}},"
      "\"attributes\":[{\"attribute\":\"PK\",\"type\":\"S\"},"
      "{\"attribute\":\"email\",\"type\":\"X\"}]}",
      &err);
  ck_assert_ptr_null(m);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.message, "model User: attribute \"email\": unknown type \"X\" (S, N, B, "
                                "BOOL, NULL, SS, NS, BS, M or L)");
  ck_assert_str_eq(err.field, "attributes[1].type");

  m = model_from_text("{\"table\":{\"name\":\"users\"}}", &err);
  ck_assert_ptr_null(m);
  ck_assert_str_eq(err.message, "name is required");
  ck_assert_str_eq(err.field, "name");

  m = model_from_text("{\"name\":\"has space\"}", &err);
  ck_assert_ptr_null(m);
  ck_assert_str_eq(err.field, "name");

  m = model_from_text("{\"name\":\"U\",\"dms_version\":\"0.9\"}", &err);
  ck_assert_ptr_null(m);
  ck_assert_str_eq(err.message,
                   "model U: unsupported dms_version \"0.9\" (this daemon reads \"0.1\" and \"0.2\")");

  m = model_from_text("{\"name\":\"U\",\"table\":{\"name\":\"uuu\"},"
                      "\"attributes\":[{\"attribute\":\"a\\u0001b\",\"type\":\"S\"}]}",
                      &err);
  ck_assert_ptr_null(m);
  ck_assert_str_eq(err.message,
                   "model U: attributes[0]: attribute must not contain control characters");
  ck_assert_str_eq(err.field, "attributes[0].attribute");

  m = model_from_text("[1]", &err);
  ck_assert_ptr_null(m);
  ck_assert_str_eq(err.message, "a model must be a map");
}
END_TEST

START_TEST(from_json_defaults) {
  struct tt_error err = {0};
  struct tt_model *m = model_from_text(
      "{\"name\":\"Thing\",\"table\":{\"name\":\"things\"},"
      "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"N\"}},"
      "\"tags\":{\"additional_attributes\":true},"
      "\"attributes\":[{\"attribute\":\"id\",\"type\":\"N\",\"required\":true},"
      "{\"attribute\":\"email\",\"type\":\"S\",\"tags\":{\"unique\":true}}],"
      "\"indexes\":[{\"name\":\"by-email\",\"type\":\"GSI\","
      "\"partition\":{\"attribute\":\"email\",\"type\":\"S\"}}]}",
      &err);
  ck_assert_msg(m != NULL, "%s", err.message);
  ck_assert_int_eq(m->dms_version, TT_DMS_V0_2);
  ck_assert(m->additional_attributes);
  ck_assert_ptr_null(tt_model_sk(m));
  ck_assert_ptr_null(m->source);
  ck_assert(tt_model_attr_find(m, "email", 5)->unique);
  ck_assert(!tt_model_attr_find(m, "id", 2)->unique);
  ck_assert_int_eq(m->indexes[0].projection, TT_PROJECTION_ALL);
  ck_assert(!m->write_once);
  json_t *j = tt_model_to_json(m);
  ck_assert_str_eq(json_string_value(json_object_get(j, "dms_version")), "0.2");
  ck_assert_str_eq(json_string_value(json_object_get(
                       json_object_get(json_array_get(json_object_get(j, "indexes"), 0),
                                       "projection"),
                       "type")),
                   "ALL");
  ck_assert(json_is_true(json_object_get(json_object_get(j, "tags"), "additional_attributes")));
  json_decref(j);

  /* The same model written in another order with explicit defaults is
   * identical. */
  struct tt_model *m2 = model_from_text(
      "{\"attributes\":[{\"attribute\":\"email\",\"type\":\"S\",\"tags\":{\"unique\":true},"
      "\"optional\":false,\"json\":false},{\"attribute\":\"id\",\"type\":\"N\",\"required\":true}],"
      "\"dms_version\":\"0.2\",\"name\":\"Thing\",\"table\":{\"name\":\"things\"},"
      "\"write_policy\":{\"mode\":\"mutable\",\"protected_attributes\":[]},"
      "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"N\"},\"sort\":null},"
      "\"tags\":{\"additional_attributes\":true},"
      "\"indexes\":[{\"name\":\"by-email\",\"type\":\"GSI\",\"projection\":{\"type\":\"ALL\"},"
      "\"partition\":{\"attribute\":\"email\",\"type\":\"S\"}}], \"x-note\": \"ignored\"}",
      &err);
  ck_assert_msg(m2 != NULL, "%s", err.message);
  ck_assert(tt_model_equal(m, m2));
  tt_model_unref(m2);
  tt_model_unref(m);
}
END_TEST

/* --- query target choice ------------------------------------------------------ */

/* write_policy: the default, write_once, protected attributes (listed twice
 * is harmless; the canonical form sorts them) and the refusals. */
#define WP_MODEL(wp)                                                                          \
  "{\"name\":\"P\",\"table\":{\"name\":\"pins\"},"                                          \
  "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"                        \
  "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\"},{\"attribute\":\"pin\","          \
  "\"type\":\"S\"},{\"attribute\":\"b\",\"type\":\"S\"}]" wp "}"

START_TEST(write_policy_rules) {
  struct tt_error err = {0};
  struct tt_model *m = model_from_text(WP_MODEL(""), &err);
  ck_assert_ptr_nonnull(m);
  ck_assert(!m->write_once);
  for (size_t i = 0; i < m->n_attrs; i++)
    ck_assert(!m->attrs[i].is_protected);
  json_t *canon = tt_model_to_json(m);
  char *wp = json_dumps(json_object_get(canon, "write_policy"), JSON_SORT_KEYS);
  ck_assert_str_eq(wp, "{\"mode\": \"mutable\", \"protected_attributes\": []}");
  free(wp);
  json_decref(canon);
  tt_model_unref(m);

  m = model_from_text(WP_MODEL(",\"write_policy\":{\"mode\":\"write_once\","
                               "\"protected_attributes\":[\"pin\",\"b\",\"pin\"]}"),
                      &err);
  ck_assert_ptr_nonnull(m);
  ck_assert(m->write_once);
  ck_assert(tt_model_attr_find(m, "pin", 3)->is_protected);
  ck_assert(tt_model_attr_find(m, "b", 1)->is_protected);
  ck_assert(!tt_model_attr_find(m, "id", 2)->is_protected);
  canon = tt_model_to_json(m);
  wp = json_dumps(json_object_get(canon, "write_policy"), JSON_SORT_KEYS);
  ck_assert_str_eq(wp, "{\"mode\": \"write_once\", \"protected_attributes\": [\"b\", \"pin\"]}");
  free(wp);
  json_decref(canon);
  tt_model_unref(m);

  /* mode alone, and protected_attributes alone, are complete policies. */
  m = model_from_text(WP_MODEL(",\"write_policy\":{\"protected_attributes\":[\"pin\"]}"), &err);
  ck_assert(m != NULL && !m->write_once && tt_model_attr_find(m, "pin", 3)->is_protected);
  tt_model_unref(m);
  m = model_from_text(WP_MODEL(",\"write_policy\":{\"mode\":\"write_once\"}"), &err);
  ck_assert(m != NULL && m->write_once && !tt_model_attr_find(m, "pin", 3)->is_protected);
  tt_model_unref(m);

  static const struct {
    const char *wp, *field, *message;
  } bad[] = {
      {",\"write_policy\":{\"mode\":\"append_only\"}", "write_policy.mode",
       "model P: write_policy: unknown mode \"append_only\" (mutable or write_once)"},
      {",\"write_policy\":{\"protected_attributes\":[\"nope\"]}",
       "write_policy.protected_attributes[0]",
       "model P: write_policy: protected attribute \"nope\" is not declared"},
      {",\"write_policy\":{\"protected_attributes\":[\"pin\",7]}",
       "write_policy.protected_attributes[1]",
       "model P: write_policy: protected_attributes must be a list of attribute names"},
      {",\"write_policy\":{\"protected_attributes\":[\"\"]}",
       "write_policy.protected_attributes[0]",
       "model P: write_policy: protected_attributes must be a list of attribute names"},
      {",\"write_policy\":{\"protected_attributes\":\"pin\"}",
       "write_policy.protected_attributes", NULL},
      {",\"write_policy\":{\"mode\":true}", "write_policy.mode", NULL},
      {",\"write_policy\":{\"modes\":\"write_once\"}", "write_policy.modes", NULL},
      {",\"write_policy\":\"write_once\"", "write_policy", NULL},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char text[1024];
    snprintf(text, sizeof(text), WP_MODEL("%s"), bad[i].wp);
    memset(&err, 0, sizeof(err));
    ck_assert_ptr_null(model_from_text(text, &err));
    ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
    ck_assert_msg(strcmp(err.field, bad[i].field) == 0, "case %zu: field %s", i, err.field);
    if (bad[i].message)
      ck_assert_str_eq(err.message, bad[i].message);
  }
}
END_TEST

START_TEST(choose_index) {
  struct tt_model_registry *r = load_dir("dms/v0.2/models/order.yml");
  const struct tt_model *m = tt_model_registry_get(r, "Order");
  const struct tt_model_index *ix = (const void *)1;
  struct tt_error err = {0};
  ck_assert_int_eq(tt_model_choose_index(m, "PK", NULL, &ix, &err), 0);
  ck_assert_ptr_null(ix);
  ck_assert_int_eq(tt_model_choose_index(m, "PK", "SK", &ix, &err), 0);
  ck_assert_ptr_null(ix);
  ck_assert_int_eq(tt_model_choose_index(m, "status", NULL, &ix, &err), 0);
  ck_assert_str_eq(ix->name, "gsi-status");
  ck_assert_int_eq(tt_model_choose_index(m, "status", "createdAt", &ix, &err), 0);
  ck_assert_str_eq(ix->name, "gsi-status");
  ck_assert_int_eq(tt_model_choose_index(m, "status", "amount", &ix, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.field, "index");
  ck_assert_str_eq(err.message, "model Order: no table or index has partition key \"status\" and "
                                "sort key \"amount\"; keys are: table (PK, SK), gsi-status "
                                "(status, createdAt)");
  tt_model_registry_free(r);

  r = load_dir("dms/multi");
  m = tt_model_registry_get(r, "Entry");
  ck_assert_int_eq(tt_model_choose_index(m, "PK", "at", &ix, &err), 0);
  ck_assert_str_eq(ix->name, "lsi-at");
  ck_assert_int_eq(tt_model_choose_index(m, "PK", NULL, &ix, &err), 0);
  ck_assert_ptr_null(ix);
  ck_assert_int_eq(tt_model_choose_index(m, "day", "at", &ix, &err), 0);
  ck_assert_str_eq(ix->name, "by-day");
  tt_model_registry_free(r);

  struct tt_model *two = model_from_text(
      "{\"name\":\"T\",\"table\":{\"name\":\"ttt\"},"
      "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
      "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\"},{\"attribute\":\"e\",\"type\":\"S\"}],"
      "\"indexes\":[{\"name\":\"one\",\"type\":\"GSI\",\"partition\":{\"attribute\":\"e\",\"type\":"
      "\"S\"}},{\"name\":\"two\",\"type\":\"GSI\",\"partition\":{\"attribute\":\"e\",\"type\":"
      "\"S\"},\"projection\":{\"type\":\"KEYS_ONLY\"}}]}",
      &err);
  ck_assert_msg(two != NULL, "%s", err.message);
  ck_assert_int_eq(tt_model_choose_index(two, "e", NULL, &ix, &err), -1);
  ck_assert_str_eq(err.message,
                   "model T: several indexes fit these keys, name one in \"index\": one (e), two (e)");
  tt_model_unref(two);
}
END_TEST

/* --- registry ----------------------------------------------------------------- */

START_TEST(registry_reload_and_conflicts) {
  struct tt_model_registry *r = load_dir("dms/v0.2/models");
  struct tt_error err = {0};
  /* The same directory again: identical models, accepted, nothing added. */
  ck_assert_int_eq(tt_model_registry_load_path(r, "dms/v0.2/models", &err), 0);
  ck_assert_uint_eq(tt_model_registry_count(r), 9);
  /* v0.1 models differ (dms_version): refused, registry unchanged. */
  ck_assert_int_eq(tt_model_registry_load_path(r, "dms/v0.1/models", &err), -1);
  ck_assert_str_eq(err.message, "dms/v0.1/models/encrypted-record.yml: model EncryptedRecord is "
                                "also defined, differently, in "
                                "dms/v0.2/models/encrypted-record.yml");
  ck_assert_uint_eq(tt_model_registry_count(r), 9);
  /* A directory of several files is all or nothing too. */
  ck_assert_int_eq(tt_model_registry_load_path(r, "dms/conflict", &err), -1);
  ck_assert_str_eq(err.message, "dms/conflict/b.yml: model Beta: table \"shared\" is also used "
                                "by model Alpha (dms/conflict/a.yml) with a different key schema");
  ck_assert_ptr_null(tt_model_registry_get(r, "Alpha"));
  ck_assert_int_eq(tt_model_registry_load_path(r, "dms/does-not-exist", &err), -1);
  ck_assert_str_eq(err.message,
                   "dms/does-not-exist: cannot read models: No such file or directory");
  ck_assert_int_eq(tt_model_registry_load_path(r, "dms/NOTICE", &err), -1);
  ck_assert_str_eq(err.message, "dms/NOTICE: a DMS file name must end in .yml, .yaml or .json");
  ck_assert_int_eq(tt_model_registry_load_path(r, "dms", &err), -1);
  ck_assert_str_eq(err.message, "dms: the directory holds no .yml, .yaml or .json model files");
  /* Two documents in one YAML stream, sharing a table. */
  ck_assert_int_eq(tt_model_registry_load_path(r, "dms/multi/stream.yml", &err), 0);
  ck_assert_uint_eq(tt_model_registry_count(r), 11);
  ck_assert_str_eq(tt_model_registry_at(r, 0)->name, "Account");
  ck_assert_int_eq(tt_model_registry_get(r, "Entry")->dms_version, TT_DMS_V0_1);
  tt_model_registry_free(r);
}
END_TEST

START_TEST(registry_put) {
  struct tt_model_registry *r = load_dir("dms/v0.2/models");
  struct tt_error err = {0};
  enum tt_model_put_result res = 0;
  const struct tt_model *user = tt_model_registry_get(r, "User");
  /* Identical: 200. */
  json_t *j = tt_model_to_json(user);
  struct tt_model *m = NULL;
  ck_assert_int_eq(tt_model_from_json(j, NULL, &m, &err), 0);
  ck_assert_int_eq(tt_model_registry_put(r, m, false, &res, &err), 0);
  ck_assert_int_eq(res, TT_MODEL_PUT_IDENTICAL);
  ck_assert_ptr_eq(tt_model_registry_get(r, "User"), user);
  /* Different without replace: AlreadyExists, nothing changes. */
  json_array_remove(json_object_get(j, "indexes"), 0);
  ck_assert_int_eq(tt_model_from_json(j, NULL, &m, &err), 0);
  ck_assert_int_eq(tt_model_registry_put(r, m, false, &res, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_ALREADY_EXISTS);
  ck_assert_str_eq(err.message, "model User already exists with a different definition; use "
                                "?replace=true to replace it");
  ck_assert_ptr_eq(tt_model_registry_get(r, "User"), user);
  /* Replace: an in-flight holder of the old model keeps a valid model. */
  struct tt_model *held = tt_model_ref((struct tt_model *)user);
  ck_assert_int_eq(tt_model_from_json(j, NULL, &m, &err), 0);
  ck_assert_int_eq(tt_model_registry_put(r, m, true, &res, &err), 0);
  ck_assert_int_eq(res, TT_MODEL_PUT_REPLACED);
  ck_assert_uint_eq(tt_model_registry_get(r, "User")->n_indexes, 0);
  ck_assert_uint_eq(held->n_indexes, 1);
  ck_assert_str_eq(held->name, "User");
  tt_model_unref(held);
  /* New name: 201, in name order. */
  json_object_set_new(j, "name", json_string("Aardvark"));
  ck_assert_int_eq(tt_model_from_json(j, NULL, &m, &err), 0);
  ck_assert_int_eq(tt_model_registry_put(r, m, false, &res, &err), 0);
  ck_assert_int_eq(res, TT_MODEL_PUT_CREATED);
  ck_assert_str_eq(tt_model_registry_at(r, 0)->name, "Aardvark");
  ck_assert_uint_eq(tt_model_registry_count(r), 10);
  /* A new model on an existing table with other keys: refused. */
  json_object_set_new(j, "name", json_string("Zebra"));
  json_object_del(json_object_get(j, "keys"), "sort");
  json_t *attrs = json_object_get(j, "attributes");
  for (size_t i = 0; i < json_array_size(attrs); i++)
    if (strcmp(json_string_value(json_object_get(json_array_get(attrs, i), "attribute")), "SK") ==
        0)
      json_array_remove(attrs, i);
  ck_assert_int_eq(tt_model_from_json(j, NULL, &m, &err), 0);
  ck_assert_int_eq(tt_model_registry_put(r, m, false, &res, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_uint_eq(tt_model_registry_count(r), 10);
  json_decref(j);
  tt_model_registry_free(r);
}
END_TEST

/* --- replaces: what stored items must survive ------------------------------------ */

/* A model Secret on table "secrets" with keys PK (S) and SK (S), plus
 * `extra` (a JSON array text of further attribute objects, may be "") and
 * `tail` (further members of the model object, may be ""). */
static struct tt_model *secret_model(const char *pk_type, const char *extra, const char *tail) {
  char text[2048];
  snprintf(text, sizeof(text),
           "{\"name\":\"Secret\",\"table\":{\"name\":\"secrets\"},"
           "\"keys\":{\"partition\":{\"attribute\":\"PK\",\"type\":\"%s\"},"
           "\"sort\":{\"attribute\":\"SK\",\"type\":\"S\"}},"
           "\"attributes\":[{\"attribute\":\"PK\",\"type\":\"%s\",\"roles\":[\"pk\"]},"
           "{\"attribute\":\"SK\",\"type\":\"S\",\"roles\":[\"sk\"]}%s%s]%s%s}",
           pk_type, pk_type, extra[0] ? "," : "", extra, tail[0] ? "," : "", tail);
  struct tt_error err = {0};
  struct tt_model *m = model_from_text(text, &err);
  ck_assert_msg(m != NULL, "%s", err.message);
  return m;
}

#define ENC_SECRET                                                                               \
  "{\"attribute\":\"secret\",\"type\":\"S\",\"optional\":true,\"encryption\":{\"v\":1}}"
#define PLAIN_SECRET "{\"attribute\":\"secret\",\"type\":\"S\",\"optional\":true}"
#define PLAIN_STATUS "{\"attribute\":\"status\",\"type\":\"S\",\"optional\":true}"
#define STATUS_INDEX "\"indexes\":[{\"name\":\"by-status\",\"type\":\"GSI\"," \
                     "\"partition\":{\"attribute\":\"status\",\"type\":\"S\"}}]"

static const struct {
  const char *pk_type, *extra, *tail; /* the replacement */
  const char *field, *message;        /* "" when the replace is safe */
} replace_cases[] = {
    /* Removing the encryption (the attribute kept as a plain S). */
    {"S", PLAIN_SECRET "," PLAIN_STATUS, STATUS_INDEX, "attributes.secret",
     "replacing model Secret removes the encryption of attribute \"secret\" (new values in "
     "plaintext, stored envelopes read as maps); use a new model name, or "
     "?replace=true&allow_unsafe=true"},
    /* Dropping the encrypted attribute, with or without additional attributes. */
    {"S", PLAIN_STATUS, STATUS_INDEX ",\"tags\":{\"additional_attributes\":true}",
     "attributes.secret",
     "replacing model Secret drops the encrypted attribute \"secret\" (stored envelopes read "
     "as maps); use a new model name, or ?replace=true&allow_unsafe=true"},
    {"S", PLAIN_STATUS, STATUS_INDEX, "attributes.secret",
     "replacing model Secret drops the encrypted attribute \"secret\" (stored envelopes read "
     "as maps); use a new model name, or ?replace=true&allow_unsafe=true"},
    /* Retyping: the encrypted attribute, a plain one (also through json). */
    {"S",
     "{\"attribute\":\"secret\",\"type\":\"N\",\"optional\":true,\"encryption\":{}}," PLAIN_STATUS,
     STATUS_INDEX, "attributes.secret",
     "replacing model Secret changes the type of attribute \"secret\", which stored items keep; "
     "use a new model name, or ?replace=true&allow_unsafe=true"},
    {"S", ENC_SECRET ",{\"attribute\":\"status\",\"type\":\"S\",\"optional\":true,\"json\":true}",
     "", "attributes.status",
     "replacing model Secret changes the type of attribute \"status\", which stored items keep; "
     "use a new model name, or ?replace=true&allow_unsafe=true"},
    /* Encrypting a plain attribute that items hold in plaintext. */
    {"S", ENC_SECRET ",{\"attribute\":\"status\",\"type\":\"S\",\"optional\":true,"
          "\"encryption\":{\"v\":1}}",
     "", "attributes.status",
     "replacing model Secret encrypts attribute \"status\", which stored items may hold in "
     "plaintext; use a new model name, or ?replace=true&allow_unsafe=true"},
    /* The table's keys and an index's keys (with two changes: the count). */
    {"N", ENC_SECRET "," PLAIN_STATUS, STATUS_INDEX, "keys",
     "replacing model Secret changes the table's keys, which stored items keep (and 1 more "
     "unsafe change); use a new model name, or ?replace=true&allow_unsafe=true"},
    {"S", ENC_SECRET "," PLAIN_STATUS ",{\"attribute\":\"when\",\"type\":\"S\",\"optional\":true}",
     "\"indexes\":[{\"name\":\"by-status\",\"type\":\"GSI\",\"partition\":{\"attribute\":"
     "\"status\",\"type\":\"S\"},\"sort\":{\"attribute\":\"when\",\"type\":\"S\"}}]",
     "indexes.by-status",
     "replacing model Secret changes the keys of index \"by-status\"; use a new model name, or "
     "?replace=true&allow_unsafe=true"},
    {"N", PLAIN_SECRET "," PLAIN_STATUS, STATUS_INDEX, "keys",
     "replacing model Secret changes the table's keys, which stored items keep (and 2 more "
     "unsafe changes); use a new model name, or ?replace=true&allow_unsafe=true"},
    /* Safe: a new plain or encrypted attribute, a new index, a dropped index,
     * a dropped plain attribute, optional/required flags. */
    {"S", ENC_SECRET "," PLAIN_STATUS ",{\"attribute\":\"note\",\"type\":\"S\",\"optional\":true,"
          "\"encryption\":{\"v\":1}}",
     STATUS_INDEX, "", ""},
    {"S", ENC_SECRET "," PLAIN_STATUS, "", "", ""},
    {"S", "{\"attribute\":\"secret\",\"type\":\"S\",\"required\":true,\"encryption\":{\"v\":1}}",
     "",
     "", ""},
};

START_TEST(registry_replace_rules) {
  int i = _i;
  struct tt_model_registry *r = tt_model_registry_new();
  struct tt_error err = {0};
  enum tt_model_put_result res = 0;
  struct tt_model *v1 = secret_model("S", ENC_SECRET "," PLAIN_STATUS, STATUS_INDEX);
  ck_assert_int_eq(tt_model_registry_put(r, v1, 0, &res, &err), 0);
  ck_assert_int_eq(res, TT_MODEL_PUT_CREATED);
  const struct tt_model *before = tt_model_registry_get(r, "Secret");
  struct tt_model *v2 =
      secret_model(replace_cases[i].pk_type, replace_cases[i].extra, replace_cases[i].tail);
  bool unsafe = replace_cases[i].field[0] != '\0';
  struct tt_model_change c[4];
  ck_assert_uint_eq(tt_model_unsafe_changes(before, v2, c, 4) > 0, unsafe);
  /* check and put agree; a refusal changes nothing. */
  int rc = tt_model_registry_check(r, v2, TT_MODEL_PUT_REPLACE, &res, &err);
  ck_assert_int_eq(tt_model_registry_put(r, tt_model_ref(v2), TT_MODEL_PUT_REPLACE, &res, &err),
                   rc);
  if (unsafe) {
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(err.code, TT_ERR_UNSAFE_MODEL_CHANGE);
    ck_assert_str_eq(err.field, replace_cases[i].field);
    ck_assert_str_eq(err.message, replace_cases[i].message);
    ck_assert_ptr_eq(tt_model_registry_get(r, "Secret"), before);
    ck_assert_uint_eq(tt_model_registry_count(r), 1);
    /* Allowed explicitly: replaced. */
    ck_assert_int_eq(tt_model_registry_put(r, tt_model_ref(v2),
                                           TT_MODEL_PUT_REPLACE | TT_MODEL_PUT_ALLOW_UNSAFE, &res,
                                           &err),
                     0);
  } else {
    ck_assert_msg(rc == 0, "%s", err.message);
  }
  ck_assert_int_eq(res, TT_MODEL_PUT_REPLACED);
  ck_assert_ptr_eq(tt_model_registry_get(r, "Secret"), v2);
  /* The flag alone does not replace. */
  struct tt_model *v3 = secret_model("S", ENC_SECRET, "");
  ck_assert_int_eq(tt_model_registry_put(r, v3, TT_MODEL_PUT_ALLOW_UNSAFE, &res, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_ALREADY_EXISTS);
  ck_assert_ptr_eq(tt_model_registry_get(r, "Secret"), v2);
  tt_model_unref(v2);
  tt_model_registry_free(r);
}
END_TEST

START_TEST(registry_unsafe_change_list) {
  /* Everything at once: listed keys first, attributes by name, then indexes. */
  struct tt_model *a = secret_model(
      "S", ENC_SECRET "," PLAIN_STATUS ",{\"attribute\":\"n\",\"type\":\"N\",\"optional\":true}",
      STATUS_INDEX ",\"tags\":{\"additional_attributes\":true}");
  struct tt_model *b = secret_model(
      "N",
      "{\"attribute\":\"n\",\"type\":\"S\",\"optional\":true},"
      "{\"attribute\":\"extra\",\"type\":\"S\",\"optional\":true,\"encryption\":{\"v\":1}},"
      "{\"attribute\":\"status\",\"type\":\"N\",\"optional\":true}",
      "\"indexes\":[{\"name\":\"by-status\",\"type\":\"GSI\",\"partition\":{\"attribute\":"
      "\"status\",\"type\":\"N\"}}]");
  struct tt_model_change c[8];
  size_t n = tt_model_unsafe_changes(a, b, c, 8);
  static const char *const want[][2] = {{"keys_changed", NULL},
                                        {"type_changed", "PK"},
                                        {"type_changed", "n"},
                                        {"encrypted_attribute_dropped", "secret"},
                                        {"type_changed", "status"},
                                        {"encryption_added", "extra"},
                                        {"index_keys_changed", "by-status"}};
  ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));
  for (size_t i = 0; i < n; i++) {
    ck_assert_str_eq(tt_model_change_label(c[i].kind), want[i][0]);
    if (want[i][1])
      ck_assert_str_eq(c[i].name, want[i][1]);
    else
      ck_assert_ptr_null(c[i].name);
  }
  /* A short list still counts them all; the way back is as unsafe. */
  ck_assert_uint_eq(tt_model_unsafe_changes(a, b, c, 1), n);
  ck_assert_str_eq(tt_model_change_label(c[0].kind), "keys_changed");
  ck_assert_uint_gt(tt_model_unsafe_changes(b, a, NULL, 0), 0);
  ck_assert_uint_eq(tt_model_unsafe_changes(a, a, NULL, 0), 0);
  tt_model_unref(a);
  tt_model_unref(b);
}
END_TEST

/* The property: whatever sequence of registrations, replaces and loads, an
 * attribute encrypted in a registered model never becomes plain, dropped or
 * retyped, and keys never change, without TT_MODEL_PUT_ALLOW_UNSAFE; a
 * refused operation leaves the registry exactly as it was. The model space
 * is small (3 names, 3 tables, one reserved, 4 attributes in 6 states,
 * 4 index shapes) so that names, tables and attributes collide often. */

static uint64_t prop_state;

static unsigned prop_rand(unsigned n) {
  /* xorshift64*: deterministic across platforms. */
  prop_state ^= prop_state >> 12;
  prop_state ^= prop_state << 25;
  prop_state ^= prop_state >> 27;
  return (unsigned)((prop_state * 0x2545F4914F6CDD1DULL) >> 33) % n;
}

static json_t *prop_attr(const char *name, const char *type, bool enc, bool json) {
  json_t *a = json_pack("{s:s,s:s,s:b}", "attribute", name, "type", type, "optional", 1);
  if (enc)
    json_object_set_new(a, "encryption", json_pack("{s:i}", "v", 1));
  if (json)
    json_object_set_new(a, "json", json_true());
  return a;
}

/* A random valid model object called `name`. */
static json_t *prop_model(const char *name) {
  static const char *const tables[] = {"tbl1", "tbl1", "tbl2", "jobs"};
  const char *pk_type = prop_rand(4) ? "S" : "N";
  bool has_sk = prop_rand(3) != 0;
  json_t *m = json_pack("{s:s,s:{s:s}}", "name", name, "table", "name",
                        tables[prop_rand(prop_rand(8) ? 3 : 4)]);
  json_t *keys = json_pack("{s:{s:s,s:s}}", "partition", "attribute", "PK", "type", pk_type);
  json_t *attrs = json_array();
  json_array_append_new(attrs, json_pack("{s:s,s:s,s:[s]}", "attribute", "PK", "type", pk_type,
                                         "roles", "pk"));
  if (has_sk) {
    json_object_set_new(keys, "sort", json_pack("{s:s,s:s}", "attribute", "SK", "type", "S"));
    json_array_append_new(attrs, json_pack("{s:s,s:s,s:[s]}", "attribute", "SK", "type", "S",
                                           "roles", "sk"));
  }
  json_object_set_new(m, "keys", keys);
  /* Attribute states: 0 absent, 1 S, 2 N, 3 S encrypted, 4 N encrypted, 5 S json. */
  static const char *const names[] = {"a", "b", "c", "d"};
  unsigned st[4];
  for (size_t i = 0; i < 4; i++) {
    st[i] = prop_rand(6);
    if (st[i] != 0)
      json_array_append_new(attrs, prop_attr(names[i], st[i] == 2 || st[i] == 4 ? "N" : "S",
                                             st[i] == 3 || st[i] == 4, st[i] == 5));
  }
  json_object_set_new(m, "attributes", attrs);
  /* Index shapes: none, a GSI on a, a GSI on b (both when plain S/N), an
   * LSI on (PK, a) when there is a sort key. */
  unsigned ix = prop_rand(4);
  if ((ix == 1 || ix == 2) && (st[ix - 1] == 1 || st[ix - 1] == 2))
    json_object_set_new(m, "indexes",
                        json_pack("[{s:s,s:s,s:{s:s,s:s}}]", "name", "ix1", "type", "GSI",
                                  "partition", "attribute", names[ix - 1], "type",
                                  st[ix - 1] == 2 ? "N" : "S"));
  else if (ix == 3 && has_sk && (st[0] == 1 || st[0] == 2))
    json_object_set_new(m, "indexes",
                        json_pack("[{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s}}]", "name", "ix1", "type",
                                  "LSI", "partition", "attribute", "PK", "type", pk_type, "sort",
                                  "attribute", "a", "type", st[0] == 2 ? "N" : "S"));
  if (prop_rand(4) == 0)
    json_object_set_new(m, "tags", json_pack("{s:b}", "additional_attributes", 1));
  return m;
}

static const json_t *prop_find(const json_t *list, const char *member, const char *name) {
  size_t i;
  const json_t *x;
  json_array_foreach(list, i, x) {
    if (strcmp(json_string_value(json_object_get(x, member)), name) == 0)
      return x;
  }
  return NULL;
}

/* json_equal, with two absent members equal. */
static bool prop_eq(const json_t *a, const json_t *b) {
  return a == NULL ? b == NULL : json_equal(a, b);
}

/* The oracle, written on the canonical forms rather than the structs: does
 * replacing `old` by `m` break what stored items hold? */
static bool prop_unsafe(const struct tt_model *old, const struct tt_model *m) {
  json_t *a = tt_model_to_json(old), *b = tt_model_to_json(m);
  bool bad = !prop_eq(json_object_get(a, "keys"), json_object_get(b, "keys"));
  size_t i;
  const json_t *x;
  json_array_foreach(json_object_get(a, "attributes"), i, x) {
    const json_t *y =
        prop_find(json_object_get(b, "attributes"), "attribute",
                  json_string_value(json_object_get(x, "attribute")));
    bool xe = json_object_get(x, "encryption") != NULL;
    if (y == NULL) {
      bad |= xe;
      continue;
    }
    bad |= xe != (json_object_get(y, "encryption") != NULL);
    bad |= !prop_eq(json_object_get(x, "type"), json_object_get(y, "type"));
    bad |= (json_object_get(x, "json") != NULL) != (json_object_get(y, "json") != NULL);
  }
  if (json_is_true(json_object_get(json_object_get(a, "tags"), "additional_attributes")))
    json_array_foreach(json_object_get(b, "attributes"), i, x) {
      if (json_object_get(x, "encryption") != NULL &&
          prop_find(json_object_get(a, "attributes"), "attribute",
                    json_string_value(json_object_get(x, "attribute"))) == NULL)
        bad = true;
    }
  json_array_foreach(json_object_get(a, "indexes"), i, x) {
    const json_t *y = prop_find(json_object_get(b, "indexes"), "name",
                                json_string_value(json_object_get(x, "name")));
    if (y != NULL)
      bad |= !prop_eq(json_object_get(x, "type"), json_object_get(y, "type")) ||
             !prop_eq(json_object_get(x, "partition"), json_object_get(y, "partition")) ||
             !prop_eq(json_object_get(x, "sort"), json_object_get(y, "sort"));
  }
  json_decref(a);
  json_decref(b);
  return bad;
}

/* The registry's models, in order, with a reference each. */
struct prop_snap {
  struct tt_model *m[8];
  size_t n;
};

static void prop_take(const struct tt_model_registry *r, struct prop_snap *s) {
  s->n = tt_model_registry_count(r);
  ck_assert_uint_le(s->n, 8);
  for (size_t i = 0; i < s->n; i++)
    s->m[i] = tt_model_ref((struct tt_model *)tt_model_registry_at(r, i));
}

static void prop_drop(struct prop_snap *s) {
  for (size_t i = 0; i < s->n; i++)
    tt_model_unref(s->m[i]);
  s->n = 0;
}

static bool prop_same(const struct tt_model_registry *r, const struct prop_snap *s) {
  if (tt_model_registry_count(r) != s->n)
    return false;
  for (size_t i = 0; i < s->n; i++)
    if (tt_model_registry_at(r, i) != s->m[i])
      return false;
  return true;
}

static const struct tt_model *prop_old(const struct prop_snap *s, const char *name) {
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->m[i]->name, name) == 0)
      return s->m[i];
  return NULL;
}

START_TEST(registry_replace_property) {
  static const char *const names[] = {"A", "B", "C"};
  static const unsigned flag_sets[] = {0, TT_MODEL_PUT_REPLACE, TT_MODEL_PUT_REPLACE,
                                       TT_MODEL_PUT_REPLACE | TT_MODEL_PUT_ALLOW_UNSAFE,
                                       TT_MODEL_PUT_ALLOW_UNSAFE};
  unsigned invalid = 0;
  unsigned seen[8] = {0}; /* outcomes, so a generator that stops reaching one fails */
  enum { CREATED, REPLACED_SAFE, REPLACED_UNSAFE, IDENTICAL, REFUSED_UNSAFE, REFUSED_EXISTS,
         REFUSED_SHARE, REFUSED_RESERVED };
  prop_state = 0x9E3779B97F4A7C15ULL + (uint64_t)_i * 0x5851F42D4C957F2DULL;
  struct tt_model_registry *r = tt_model_registry_new();
  struct tt_error err = {0};
  ck_assert_int_eq(tt_model_registry_reserve_table(r, "jobs", "the job ledger", &err), 0);
  for (unsigned step = 0; step < 3000; step++) {
    struct prop_snap before;
    prop_take(r, &before);
    const char *name = names[prop_rand(3)];
    json_t *obj = prop_model(name);
    /* Sometimes the registered model again, or with one change only. */
    const struct tt_model *cur = prop_old(&before, name);
    if (cur != NULL && prop_rand(4) == 0) {
      json_decref(obj);
      obj = tt_model_to_json(cur);
      json_t *attrs = json_object_get(obj, "attributes");
      json_t *x = json_array_get(attrs, prop_rand((unsigned)json_array_size(attrs)));
      switch (prop_rand(5)) {
      case 0: /* toggle one attribute's encryption */
        if (json_object_get(x, "roles") == NULL && json_object_get(x, "encryption") != NULL)
          json_object_del(x, "encryption");
        else if (json_object_get(x, "roles") == NULL)
          json_object_set_new(x, "encryption", json_pack("{s:i}", "v", 1));
        break;
      case 1: /* a new attribute, plain or encrypted */
      case 2:
        json_array_append_new(attrs, prop_attr("e", "S", prop_rand(2), false));
        break;
      case 3: /* no index */
        json_object_del(obj, "indexes");
        break;
      default: /* identical */
        break;
      }
    }
    struct tt_model *m = NULL;
    int vrc = tt_model_from_json(obj, NULL, &m, &err);
    ck_assert_msg(vrc == 0 || err.code == TT_ERR_VALIDATION, "%s", err.message);
    if (vrc != 0) { /* an index on an attribute that became encrypted */
      ck_assert_uint_lt(++invalid, 400);
      json_decref(obj);
      prop_drop(&before);
      continue;
    }
    unsigned flags = flag_sets[prop_rand(5)];
    enum tt_model_put_result res = 0, checked = 0;
    int crc = tt_model_registry_check(r, m, flags, &checked, &err);
    int rc;
    if (prop_rand(5) == 0) {
      /* Through the loader: a name it already has is accepted only identical. */
      json_t *doc = json_pack("{s:s,s:[O]}", "dms_version", "0.2", "models", obj);
      char *text = json_dumps(doc, JSON_COMPACT);
      rc = tt_model_registry_load_text(r, text, strlen(text), "prop.json", &err);
      free(text);
      json_decref(doc);
      if (rc == 0 && cur != NULL)
        ck_assert(tt_model_equal(cur, m));
      res = cur != NULL ? TT_MODEL_PUT_IDENTICAL : TT_MODEL_PUT_CREATED;
      tt_model_unref(m);
      m = NULL;
    } else {
      rc = tt_model_registry_put(r, tt_model_ref(m), flags, &res, &err);
      ck_assert_int_eq(rc, crc);
      if (rc == 0)
        ck_assert_int_eq(res, checked);
    }
    if (rc != 0) {
      ck_assert_msg(prop_same(r, &before), "step %u: a refused operation changed the registry",
                    step);
      switch (err.code) {
      case TT_ERR_UNSAFE_MODEL_CHANGE:
        ck_assert(cur != NULL && m != NULL && !(flags & TT_MODEL_PUT_ALLOW_UNSAFE));
        ck_assert_msg(prop_unsafe(cur, m), "step %u: refused a safe replace: %s", step,
                      err.message);
        seen[REFUSED_UNSAFE]++;
        break;
      case TT_ERR_ALREADY_EXISTS:
        ck_assert(cur != NULL && !(flags & TT_MODEL_PUT_REPLACE));
        seen[REFUSED_EXISTS]++;
        break;
      case TT_ERR_VALIDATION:
        seen[REFUSED_SHARE]++;
        break;
      case TT_ERR_RESERVED_MODEL:
        seen[REFUSED_RESERVED]++;
        break;
      default:
        ck_abort_msg("step %u: unexpected %s: %s", step, tt_error_code_name(err.code),
                     err.message);
      }
    } else {
      const struct tt_model *now = tt_model_registry_get(r, name);
      ck_assert_ptr_nonnull(now);
      if (res == TT_MODEL_PUT_IDENTICAL) {
        ck_assert(prop_same(r, &before));
        seen[IDENTICAL]++;
      } else if (res == TT_MODEL_PUT_CREATED) {
        ck_assert_ptr_null(cur);
        ck_assert_uint_eq(tt_model_registry_count(r), before.n + 1);
        seen[CREATED]++;
      } else {
        ck_assert_ptr_nonnull(cur);
        ck_assert_ptr_eq(now, m);
        ck_assert_uint_eq(tt_model_registry_count(r), before.n);
        bool unsafe = prop_unsafe(cur, now);
        /* The invariant: only the flag lets an unsafe replace through. */
        ck_assert_msg(!unsafe || (flags & TT_MODEL_PUT_ALLOW_UNSAFE),
                      "step %u: model %s changed unsafely without allow_unsafe", step, name);
        ck_assert_uint_eq(tt_model_unsafe_changes(cur, now, NULL, 0) > 0, unsafe);
        seen[unsafe ? REPLACED_UNSAFE : REPLACED_SAFE]++;
      }
      /* Other names are untouched. */
      for (size_t i = 0; i < before.n; i++)
        if (strcmp(before.m[i]->name, name) != 0)
          ck_assert_ptr_eq(tt_model_registry_get_internal(r, before.m[i]->name), before.m[i]);
    }
    tt_model_unref(m);
    json_decref(obj);
    prop_drop(&before);
  }
  for (size_t i = 0; i < 8; i++)
    ck_assert_msg(seen[i] > 0, "outcome %zu never happened (%u %u %u %u %u %u %u %u)", i,
                  seen[0], seen[1], seen[2], seen[3], seen[4], seen[5], seen[6], seen[7]);
  tt_model_registry_free(r);
}
END_TEST

/* --- YAML subset ---------------------------------------------------------------- */

START_TEST(yaml_scalars) {
  static const char text[] = "a: 1\n"
                             "b: 9007199254740993\n"
                             "c: 123456789012345678901234567890\n"
                             "d: 0.10\n"
                             "e: yes\n"
                             "f: ~\n"
                             "g: TRUE\n"
                             "h: \"1\"\n"
                             "i: !!str 12\n"
                             "j: 2020-01-01\n"
                             "k:\n"
                             "l: -5\n"
                             "m: 'null'\n"
                             "n: 1e3\n"
                             "o: False\n"
                             "p: |\n  block\n";
  json_t *docs = NULL;
  struct tt_error err = {0};
  ck_assert_int_eq(tt_dms_parse(text, strlen(text), TT_DMS_SYNTAX_YAML, "t.yml", &docs, &err), 0);
  ck_assert_uint_eq(json_array_size(docs), 1);
  json_t *o = json_array_get(docs, 0);
  ck_assert_int_eq(json_integer_value(json_object_get(o, "a")), 1);
  ck_assert(json_is_integer(json_object_get(o, "b")));
  ck_assert_int_eq(json_integer_value(json_object_get(o, "b")), 9007199254740993LL);
  ck_assert_str_eq(json_string_value(json_object_get(o, "c")), "123456789012345678901234567890");
  ck_assert_str_eq(json_string_value(json_object_get(o, "d")), "0.10");
  ck_assert_str_eq(json_string_value(json_object_get(o, "e")), "yes");
  ck_assert(json_is_null(json_object_get(o, "f")));
  ck_assert(json_is_true(json_object_get(o, "g")));
  ck_assert_str_eq(json_string_value(json_object_get(o, "h")), "1");
  ck_assert_str_eq(json_string_value(json_object_get(o, "i")), "12");
  ck_assert_str_eq(json_string_value(json_object_get(o, "j")), "2020-01-01");
  ck_assert(json_is_null(json_object_get(o, "k")));
  ck_assert_int_eq(json_integer_value(json_object_get(o, "l")), -5);
  ck_assert_str_eq(json_string_value(json_object_get(o, "m")), "null");
  ck_assert_str_eq(json_string_value(json_object_get(o, "n")), "1e3");
  ck_assert(json_is_false(json_object_get(o, "o")));
  ck_assert_str_eq(json_string_value(json_object_get(o, "p")), "block\n");
  json_decref(docs);
}
END_TEST

START_TEST(yaml_limits) {
  json_t *docs = NULL;
  struct tt_error err = {0};
  char deep[200];
  memset(deep, '[', 100);
  deep[100] = '\0';
  ck_assert_int_eq(tt_dms_parse(deep, 100, TT_DMS_SYNTAX_YAML, NULL, &docs, &err), -1);
  ck_assert_str_eq(err.message, "line 1 column 65: nesting is too deep for a DMS document");
  ck_assert_int_eq(tt_dms_parse(deep, 100, TT_DMS_SYNTAX_JSON, "x.json", &docs, &err), -1);
  ck_assert_ptr_null(docs);

  static const char alias[] = "a: &x 1\nb: *x\n";
  ck_assert_int_eq(tt_dms_parse(alias, strlen(alias), TT_DMS_SYNTAX_YAML, "a.yml", &docs, &err),
                   -1);
  ck_assert_str_eq(err.message, "a.yml: line 1 column 4: YAML anchors (&name) are not supported "
                                "in DMS files; write the value out");
  static const char alias2[] = "a: 1\nb: *x\n";
  ck_assert_int_eq(tt_dms_parse(alias2, strlen(alias2), TT_DMS_SYNTAX_YAML, NULL, &docs, &err),
                   -1);
  ck_assert_str_eq(err.message, "line 2 column 4: YAML aliases (*name) are not supported in DMS "
                                "files; write the value out");
  static const char complex_key[] = "? [a]\n: 1\n";
  ck_assert_int_eq(
      tt_dms_parse(complex_key, strlen(complex_key), TT_DMS_SYNTAX_YAML, NULL, &docs, &err), -1);
  ck_assert_str_eq(err.message,
                   "line 1 column 3: mapping keys must be plain strings (no lists or maps as keys)");
  static const char dup[] = "{\"a\": 1, \"a\": 2}";
  ck_assert_int_eq(tt_dms_parse(dup, strlen(dup), TT_DMS_SYNTAX_JSON, NULL, &docs, &err), -1);
  ck_assert_int_eq(tt_dms_parse(dup, strlen(dup), TT_DMS_SYNTAX_YAML, NULL, &docs, &err), -1);
  ck_assert_str_eq(err.message, "line 1 column 15: duplicate key \"a\"");
  static const char bad_utf8[] = "a: \"\xff\"\n";
  ck_assert_int_eq(
      tt_dms_parse(bad_utf8, strlen(bad_utf8), TT_DMS_SYNTAX_YAML, NULL, &docs, &err), -1);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
}
END_TEST

START_TEST(naming_rules) {
  static const struct {
    const char *conv;
    const char *name;
    bool ok;
  } cases[] = {
      {"camelCase", "emailHash", true},  {"camelCase", "PK", true},
      {"camelCase", "SK", true},         {"camelCase", "Email", false},
      {"camelCase", "email_hash", false}, {"camelCase", "a1B2", true},
      {"camelCase", "PKX", false},       {"dynamorm", "createdAt", true},
      {"dynamorm", "created-at", false}, {"snake_case", "email_hash", true},
      {"snake_case", "a_1", true},       {"snake_case", "a__b", false},
      {"snake_case", "a_", false},       {"snake_case", "_a", false},
      {"snake_case", "PK", false},       {"snake_case", "emailHash", false},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char text[600];
    /* The key is an attribute named for the case; the pk is always valid. */
    snprintf(text, sizeof(text),
             "{\"name\":\"N\",\"table\":{\"name\":\"nnn\"},\"naming\":{\"convention\":\"%s\"},"
             "\"keys\":{\"partition\":{\"attribute\":\"id\",\"type\":\"S\"}},"
             "\"attributes\":[{\"attribute\":\"id\",\"type\":\"S\"},"
             "{\"attribute\":\"%s\",\"type\":\"S\"}]}",
             cases[i].conv, cases[i].name);
    struct tt_error err = {0};
    struct tt_model *m = model_from_text(text, &err);
    ck_assert_msg((m != NULL) == cases[i].ok, "%s %s: %s", cases[i].conv, cases[i].name,
                  err.message);
    if (m == NULL)
      ck_assert_str_eq(err.field, "attributes[1].attribute");
    tt_model_unref(m);
  }
}
END_TEST

START_TEST(type_names) {
  static const char *const names[] = {"S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "M", "L"};
  for (size_t i = 0; i < 10; i++)
    ck_assert_str_eq(tt_model_type_name(tt_av_type_parse(names[i], strlen(names[i]))), names[i]);
  ck_assert_int_eq(tt_av_type_parse("s", 1), 0);
  ck_assert_int_eq(tt_av_type_parse("STRING", 6), 0);
  ck_assert_str_eq(tt_model_type_name((enum tt_av_type)99), "?");
}
END_TEST

static Suite *model_suite(void) {
  Suite *s = suite_create("model");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, fixtures_v01_load);
  tcase_add_test(tc, fixtures_v02_load);
  tcase_add_test(tc, fixture_order_details);
  tcase_add_test(tc, fixture_flags);
  tcase_add_test(tc, fixture_versions_differ);
  tcase_add_test(tc, json_file_equals_yaml);
  tcase_add_test(tc, canonical_round_trip);
  tcase_add_test(tc, canonical_form_known);
  tcase_add_loop_test(tc, bad_models, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
  tcase_add_test(tc, bad_models_all_listed);
  tcase_add_test(tc, from_json_messages);
  tcase_add_test(tc, from_json_defaults);
  tcase_add_test(tc, write_policy_rules);
  tcase_add_test(tc, choose_index);
  tcase_add_test(tc, registry_reload_and_conflicts);
  tcase_add_test(tc, registry_put);
  tcase_add_loop_test(tc, registry_replace_rules, 0,
                      (int)(sizeof(replace_cases) / sizeof(replace_cases[0])));
  tcase_add_test(tc, registry_unsafe_change_list);
  tcase_add_loop_test(tc, registry_replace_property, 0, 3); /* three seeds */
  tcase_add_test(tc, yaml_scalars);
  tcase_add_test(tc, yaml_limits);
  tcase_add_test(tc, naming_rules);
  tcase_add_test(tc, type_names);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  const char *data = getenv("TT_TEST_DATA");
  if (data == NULL || data[0] == '\0')
    data = "tests/data";
  if (chdir(data) != 0) {
    fprintf(stderr, "test_model: cannot enter the test data directory %s\n", data);
    return 1;
  }
  SRunner *sr = srunner_create(model_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
