/* SPDX-License-Identifier: Apache-2.0 */
/* test_expr_eval.c -- conditions, updates and projections evaluated on the Developer Guide's sample items. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"
#include "util/buf.h"
#include "value/codec_ddb.h"

static struct tt_av item_of(const char *wire) {
  struct tt_av v;
  struct tt_error err;
  json_t *j = json_loads(wire, 0, NULL);
  ck_assert_msg(j != NULL, "bad test JSON: %s", wire);
  ck_assert_int_eq(tt_ddb_item_from_json(j, "", &v, &err), 0);
  json_decref(j);
  return v;
}

static struct tt_av names_of(const char *plain) {
  struct tt_av v;
  struct tt_error err;
  json_t *j = json_loads(plain, 0, NULL);
  const char *k;
  json_t *s;
  size_t i = 0;
  ck_assert_ptr_nonnull(j);
  ck_assert_int_eq(tt_av_map(&v, json_object_size(j)), 0);
  json_object_foreach(j, k, s) {
    v.u.members[i].name = strdup(k);
    v.u.members[i].name_len = strlen(k);
    ck_assert_int_eq(tt_av_string(&v.u.members[i].value, json_string_value(s),
                                  json_string_length(s)),
                     0);
    i++;
  }
  ck_assert_int_eq(tt_av_map_finish(&v, NULL, &err), 0);
  json_decref(j);
  return v;
}

/* The wire JSON of an item, keys in byte order, for exact comparisons. */
static char *wire_of(const struct tt_av *item) {
  struct tt_buf b;
  tt_buf_init(&b, 0);
  ck_assert_int_eq(tt_ddb_item_write(&b, item, 0), 0);
  return tt_buf_steal(&b, NULL);
}

/* The Developer Guide's ProductCatalog item used by its condition examples. */
static const char *const product =
    "{\"Id\": {\"N\": \"456\"}, \"ProductCategory\": {\"S\": \"Sporting Goods\"},"
    " \"Price\": {\"N\": \"650\"}, \"Brand\": {\"S\": \"Brand-Company A\"},"
    " \"Color\": {\"SS\": [\"Red\", \"Black\"]}, \"Title\": {\"S\": \"18-Bicycle 456\"},"
    " \"Pictures\": {\"M\": {\"FrontView\": {\"S\": \"http://example.com/products/456_front.jpg\"},"
    "   \"RearView\": {\"S\": \"http://example.com/products/456_rear.jpg\"},"
    "   \"SideView\": {\"S\": \"http://example.com/products/456_left_side.jpg\"}}},"
    " \"ProductReviews\": {\"M\": {\"FiveStar\": {\"L\": [{\"S\": \"Excellent!\"}, {\"S\": \"Love it\"}]},"
    "   \"OneStar\": {\"L\": [{\"S\": \"Terrible product!\"}]}}},"
    " \"InStock\": {\"BOOL\": true}, \"Discontinued\": {\"NULL\": true},"
    " \"Thumb\": {\"B\": \"AAEC\"}}";

static const char *const product_values =
    "{\":cat1\": {\"S\": \"Sporting Goods\"}, \":cat2\": {\"S\": \"Gardening Supplies\"},"
    " \":lo\": {\"N\": \"500\"}, \":hi\": {\"N\": \"600\"}, \":limit\": {\"N\": \"500\"},"
    " \":L\": {\"S\": \"L\"}, \":http\": {\"S\": \"http://\"}, \":red\": {\"S\": \"Red\"},"
    " \":twenty\": {\"N\": \"20\"}, \":two\": {\"N\": \"2\"}, \":one\": {\"N\": \"1\"},"
    " \":sixfifty\": {\"S\": \"650\"}, \":pricen\": {\"N\": \"650.0\"}, \":SS\": {\"S\": \"SS\"},"
    " \":bin\": {\"B\": \"AQ==\"}, \":binpre\": {\"B\": \"AAE=\"}, \":great\": {\"S\": \"Love it\"},"
    " \":bicycle\": {\"S\": \"Bicycle\"}, \":null\": {\"NULL\": true}, \":true\": {\"BOOL\": true}}";

static bool cond(const char *text, const struct tt_av *item, const struct tt_av *names,
                 const struct tt_av *values) {
  struct tt_expr *e;
  struct tt_error err;
  int rc = tt_expr_parse(TT_EXPR_CONDITION, text, names, values, &e, &err);
  ck_assert_msg(rc == 0, "parse of '%s' failed: %s", text, err.message);
  bool r = tt_expr_eval_condition(e, item);
  tt_expr_free(e);
  return r;
}

START_TEST(test_guide_conditions) {
  struct tt_av item = item_of(product);
  struct tt_av vals = item_of(product_values);
  struct tt_av names = names_of("{\"#Pictures\": \"Pictures\", \"#SideView\": \"SideView\","
                                " \"#pr\": \"ProductReviews\", \"#1star\": \"OneStar\"}");
  /* Examples of "Condition and filter expressions, operators, and functions". */
  ck_assert(cond("attribute_exists(#Pictures.#SideView)", &item, &names, &vals));
  ck_assert(!cond("attribute_not_exists(Price)", &item, NULL, &vals));
  ck_assert(cond("attribute_not_exists(Manufacturer)", &item, NULL, &vals));
  ck_assert(cond("attribute_type(ProductReviews.FiveStar, :L)", &item, NULL, &vals));
  ck_assert(!cond("attribute_type(Price, :L)", &item, NULL, &vals));
  ck_assert(cond("attribute_type(Color, :SS)", &item, NULL, &vals));
  ck_assert(cond("begins_with(Pictures.FrontView, :http)", &item, NULL, &vals));
  ck_assert(cond("contains(Color, :red)", &item, NULL, &vals));
  ck_assert(cond("size(Brand) <= :twenty", &item, NULL, &vals));
  ck_assert(!cond("size(Color) < :two", &item, NULL, &vals));
  ck_assert(!cond("size(#pr.#1star) > :one", &item, &names, &vals));
  ck_assert(cond("size(ProductReviews.FiveStar) = :two", &item, NULL, &vals));
  ck_assert(cond("Price > :limit", &item, NULL, &vals));
  ck_assert(!cond("(ProductCategory IN (:cat1, :cat2)) and (Price between :lo and :hi)", &item,
                  NULL, &vals));
  ck_assert(cond("ProductCategory IN (:cat2, :cat1) AND NOT Price BETWEEN :lo AND :hi", &item,
                 NULL, &vals));
  tt_av_free(&item);
  tt_av_free(&vals);
  tt_av_free(&names);
}
END_TEST

START_TEST(test_comparison_semantics) {
  struct tt_av item = item_of(product);
  struct tt_av vals = item_of(product_values);
  /* Different types never compare, in any direction. */
  ck_assert(!cond("Price = :sixfifty", &item, NULL, &vals));
  ck_assert(cond("Price <> :sixfifty", &item, NULL, &vals));
  ck_assert(!cond("Price > :sixfifty", &item, NULL, &vals));
  ck_assert(!cond("Price <= :sixfifty", &item, NULL, &vals));
  /* Numbers compare as numbers. */
  ck_assert(cond("Price = :pricen", &item, NULL, &vals));
  ck_assert(cond("Price >= :pricen", &item, NULL, &vals));
  /* A missing attribute is unequal to everything and ordered with nothing. */
  ck_assert(cond("Absent <> :one", &item, NULL, &vals));
  ck_assert(!cond("Absent = :one", &item, NULL, &vals));
  ck_assert(!cond("Absent < :one", &item, NULL, &vals));
  ck_assert(!cond("NOT Absent < :one AND Absent < :one", &item, NULL, &vals));
  /* Strings and binaries by bytes. */
  ck_assert(cond("Brand < ProductCategory", &item, NULL, &vals));
  ck_assert(!cond("Thumb > :bin", &item, NULL, &vals));
  ck_assert(cond("Thumb < :bin", &item, NULL, &vals));
  ck_assert(cond("begins_with(Thumb, :binpre)", &item, NULL, &vals));
  /* contains: substring, set member, list element; never across types. */
  ck_assert(cond("contains(Title, :bicycle)", &item, NULL, &vals));
  ck_assert(cond("contains(ProductReviews.FiveStar, :great)", &item, NULL, &vals));
  ck_assert(!cond("contains(Price, :sixfifty)", &item, NULL, &vals));
  ck_assert(!cond("contains(Color, :bicycle)", &item, NULL, &vals));
  /* size of each sizable type; size of a number has no value. */
  ck_assert(cond("size(Pictures) = :two OR size(Pictures) > :two", &item, NULL, &vals));
  ck_assert(cond("size(Thumb) = :two OR size(Thumb) > :two", &item, NULL, &vals));
  ck_assert(!cond("size(Price) > :one", &item, NULL, &vals));
  ck_assert(cond("size(Title) BETWEEN :one AND :twenty", &item, NULL, &vals));
  /* NULL and BOOL compare by equality only. */
  ck_assert(cond("Discontinued = :null AND InStock = :true", &item, NULL, &vals));
  ck_assert(cond("attribute_exists(Discontinued)", &item, NULL, &vals));
  /* Absent item: nothing exists. */
  ck_assert(cond("attribute_not_exists(Id)", NULL, NULL, &vals));
  ck_assert(!cond("Id = :one", NULL, NULL, &vals));
  tt_av_free(&item);
  tt_av_free(&vals);
}
END_TEST

START_TEST(test_precedence) {
  struct tt_av item = item_of("{\"a\": {\"N\": \"1\"}, \"b\": {\"N\": \"0\"}, \"c\": {\"N\": \"0\"}}");
  struct tt_av vals = item_of("{\":one\": {\"N\": \"1\"}}");
  /* AND binds tighter than OR: a OR (b AND c). */
  ck_assert(cond("a = :one OR b = :one AND c = :one", &item, NULL, &vals));
  ck_assert(!cond("(a = :one OR b = :one) AND c = :one", &item, NULL, &vals));
  /* NOT binds tighter than AND: (NOT b) AND c. */
  ck_assert(!cond("NOT b = :one AND c = :one", &item, NULL, &vals));
  ck_assert(cond("NOT (b = :one AND c = :one)", &item, NULL, &vals));
  /* NOT binds tighter than OR: (NOT a) OR b. */
  ck_assert(!cond("NOT a = :one OR b = :one", &item, NULL, &vals));
  ck_assert(cond("not not a = :one", &item, NULL, &vals));
  /* BETWEEN's AND is not the logical AND. */
  ck_assert(cond("a BETWEEN b AND a AND a = :one", &item, NULL, &vals));
  tt_av_free(&item);
  tt_av_free(&vals);
}
END_TEST

/* Applies `text` to `before` and compares the result with `after` (wire JSON). */
static void check_update(const char *before, const char *text, const char *names_json,
                         const char *values_json, const char *after) {
  struct tt_av old = {0}, vals = {0}, names = {0}, out, want;
  struct tt_expr *e;
  struct tt_error err;
  if (before)
    old = item_of(before);
  if (values_json)
    vals = item_of(values_json);
  if (names_json)
    names = names_of(names_json);
  int rc = tt_expr_parse(TT_EXPR_UPDATE, text, names_json ? &names : NULL, values_json ? &vals : NULL,
                                &e, &err);
  ck_assert_msg(rc == 0, "parse of '%s' failed: %s", text, err.message);
  rc = tt_expr_apply_update(e, before ? &old : NULL, &out, &err);
  ck_assert_msg(rc == 0, "update '%s' failed: %s", text, err.message);
  want = item_of(after);
  char *got_text = wire_of(&out), *want_text = wire_of(&want);
  ck_assert_str_eq(got_text, want_text);
  free(got_text);
  free(want_text);
  tt_av_free(&want);
  tt_av_free(&out);
  tt_expr_free(e);
  tt_av_free(&old);
  tt_av_free(&vals);
  tt_av_free(&names);
}

static void check_update_error(const char *before, const char *text, const char *values_json,
                               const char *msg) {
  struct tt_av old = {0}, vals = item_of(values_json), out;
  struct tt_expr *e;
  struct tt_error err;
  if (before)
    old = item_of(before);
  int rc = tt_expr_parse(TT_EXPR_UPDATE, text, NULL, &vals, &e, &err);
  ck_assert_msg(rc == 0, "parse of '%s' failed: %s", text, err.message);
  tt_error_clear(&err);
  ck_assert_int_eq(tt_expr_apply_update(e, before ? &old : NULL, &out, &err), -1);
  ck_assert_int_eq(out.type, 0);
  ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
  ck_assert_str_eq(err.message, msg);
  tt_expr_free(e);
  tt_av_free(&old);
  tt_av_free(&vals);
}

/* The Developer Guide's "Update expressions" walk-through, item 789. */
static const char *const p789 =
    "{\"Id\": {\"N\": \"789\"}, \"ProductCategory\": {\"S\": \"Home Improvement\"},"
    " \"Price\": {\"N\": \"52\"}, \"InStock\": {\"BOOL\": true}, \"Brand\": {\"S\": \"Acme\"}}";

START_TEST(test_guide_updates) {
  check_update(p789, "SET ProductCategory = :c, Price = :p", NULL,
               "{\":c\": {\"S\": \"Hardware\"}, \":p\": {\"N\": \"60\"}}",
               "{\"Id\": {\"N\": \"789\"}, \"ProductCategory\": {\"S\": \"Hardware\"},"
               " \"Price\": {\"N\": \"60\"}, \"InStock\": {\"BOOL\": true}, \"Brand\": {\"S\": \"Acme\"}}");
  check_update("{\"Id\": {\"N\": \"789\"}}", "SET RelatedItems = :ri, ProductReviews = :pr", NULL,
               "{\":ri\": {\"L\": [{\"S\": \"Hammer\"}]},"
               " \":pr\": {\"M\": {\"FiveStar\": {\"L\": [{\"S\": \"Best product ever!\"}]}}}}",
               "{\"Id\": {\"N\": \"789\"}, \"RelatedItems\": {\"L\": [{\"S\": \"Hammer\"}]},"
               " \"ProductReviews\": {\"M\": {\"FiveStar\": {\"L\": [{\"S\": \"Best product ever!\"}]}}}}");
  /* Nested elements through names; an index past the end appends. */
  check_update("{\"Id\": {\"N\": \"789\"}, \"ProductReviews\": {\"M\": {\"FiveStar\": {\"L\": [{\"S\": \"a\"}]}}}}",
               "SET #pr.#5star[1] = :r5, #pr.#3star = :r3",
               "{\"#pr\": \"ProductReviews\", \"#5star\": \"FiveStar\", \"#3star\": \"ThreeStar\"}",
               "{\":r5\": {\"S\": \"Very happy\"}, \":r3\": {\"L\": [{\"S\": \"Just OK\"}]}}",
               "{\"Id\": {\"N\": \"789\"}, \"ProductReviews\": {\"M\": {"
               "\"FiveStar\": {\"L\": [{\"S\": \"a\"}, {\"S\": \"Very happy\"}]},"
               "\"ThreeStar\": {\"L\": [{\"S\": \"Just OK\"}]}}}}");
  check_update(p789, "SET Price = Price - :p", NULL, "{\":p\": {\"N\": \"15\"}}",
               "{\"Id\": {\"N\": \"789\"}, \"ProductCategory\": {\"S\": \"Home Improvement\"},"
               " \"Price\": {\"N\": \"37\"}, \"InStock\": {\"BOOL\": true}, \"Brand\": {\"S\": \"Acme\"}}");
  check_update("{\"Id\": {\"N\": \"1\"}, \"RelatedItems\": {\"L\": [{\"S\": \"Hammer\"}]}}",
               "SET #ri = list_append(#ri, :vals)", "{\"#ri\": \"RelatedItems\"}",
               "{\":vals\": {\"L\": [{\"S\": \"Screwdriver\"}, {\"S\": \"Hacksaw\"}]}}",
               "{\"Id\": {\"N\": \"1\"}, \"RelatedItems\": {\"L\": [{\"S\": \"Hammer\"},"
               " {\"S\": \"Screwdriver\"}, {\"S\": \"Hacksaw\"}]}}");
  check_update("{\"Id\": {\"N\": \"1\"}, \"RelatedItems\": {\"L\": [{\"S\": \"Hammer\"}]}}",
               "SET #ri = list_append(:vals, #ri)", "{\"#ri\": \"RelatedItems\"}",
               "{\":vals\": {\"L\": [{\"S\": \"Chisel\"}]}}",
               "{\"Id\": {\"N\": \"1\"}, \"RelatedItems\": {\"L\": [{\"S\": \"Chisel\"},"
               " {\"S\": \"Hammer\"}]}}");
  check_update(p789, "SET Price = if_not_exists(Price, :p), Stock = if_not_exists(Stock, :p)",
               NULL, "{\":p\": {\"N\": \"100\"}}",
               "{\"Id\": {\"N\": \"789\"}, \"ProductCategory\": {\"S\": \"Home Improvement\"},"
               " \"Price\": {\"N\": \"52\"}, \"InStock\": {\"BOOL\": true}, \"Brand\": {\"S\": \"Acme\"},"
               " \"Stock\": {\"N\": \"100\"}}");
  check_update(p789, "REMOVE Brand, InStock, QuantityOnHand", NULL, NULL,
               "{\"Id\": {\"N\": \"789\"}, \"ProductCategory\": {\"S\": \"Home Improvement\"},"
               " \"Price\": {\"N\": \"52\"}}");
  /* Indexes refer to the old list even when several elements go. */
  check_update("{\"Id\": {\"N\": \"1\"}, \"RelatedItems\": {\"L\": [{\"S\": \"a\"}, {\"S\": \"b\"},"
               " {\"S\": \"c\"}, {\"S\": \"d\"}]}}",
               "REMOVE RelatedItems[1], RelatedItems[2], RelatedItems[9]", NULL, NULL,
               "{\"Id\": {\"N\": \"1\"}, \"RelatedItems\": {\"L\": [{\"S\": \"a\"}, {\"S\": \"d\"}]}}");
  check_update(p789, "ADD QuantityOnHand :q, Price :q", NULL, "{\":q\": {\"N\": \"5\"}}",
               "{\"Id\": {\"N\": \"789\"}, \"ProductCategory\": {\"S\": \"Home Improvement\"},"
               " \"Price\": {\"N\": \"57\"}, \"InStock\": {\"BOOL\": true}, \"Brand\": {\"S\": \"Acme\"},"
               " \"QuantityOnHand\": {\"N\": \"5\"}}");
  check_update("{\"Id\": {\"N\": \"1\"}, \"Color\": {\"SS\": [\"Red\", \"Yellow\"]}}",
               "ADD Color :c", NULL, "{\":c\": {\"SS\": [\"Orange\", \"Purple\", \"Red\"]}}",
               "{\"Id\": {\"N\": \"1\"}, \"Color\": {\"SS\": [\"Orange\", \"Purple\", \"Red\", \"Yellow\"]}}");
  check_update("{\"Id\": {\"N\": \"1\"}, \"Color\": {\"SS\": [\"Red\", \"Yellow\", \"Purple\"]}}",
               "DELETE Color :p", NULL, "{\":p\": {\"SS\": [\"Yellow\", \"Purple\", \"Blue\"]}}",
               "{\"Id\": {\"N\": \"1\"}, \"Color\": {\"SS\": [\"Red\"]}}");
  /* A set that becomes empty disappears. */
  check_update("{\"Id\": {\"N\": \"1\"}, \"Tags\": {\"NS\": [\"1\", \"2\"]}}",
               "DELETE Tags :t", NULL, "{\":t\": {\"NS\": [\"2.0\", \"1\"]}}",
               "{\"Id\": {\"N\": \"1\"}}");
  /* DELETE of a missing attribute does nothing. */
  check_update("{\"Id\": {\"N\": \"1\"}}", "DELETE Tags :t", NULL, "{\":t\": {\"NS\": [\"2\"]}}",
               "{\"Id\": {\"N\": \"1\"}}");
  /* Every operand reads the old item. */
  check_update("{\"a\": {\"N\": \"1\"}, \"b\": {\"N\": \"2\"}}", "SET a = b, b = a", NULL, NULL,
               "{\"a\": {\"N\": \"2\"}, \"b\": {\"N\": \"1\"}}");
  /* An absent item starts empty. */
  check_update(NULL, "SET a = :v ADD n :one", NULL,
               "{\":v\": {\"S\": \"x\"}, \":one\": {\"N\": \"1\"}}",
               "{\"a\": {\"S\": \"x\"}, \"n\": {\"N\": \"1\"}}");
  /* Exact decimal arithmetic. */
  check_update("{\"n\": {\"N\": \"0.1\"}}", "SET n = n + :x", NULL,
               "{\":x\": {\"N\": \"0.2\"}}", "{\"n\": {\"N\": \"0.3\"}}");
}
END_TEST

START_TEST(test_update_errors) {
  check_update_error(p789, "SET Price = Absent + :one", "{\":one\": {\"N\": \"1\"}}",
                     "The provided expression refers to an attribute that does not exist in the "
                     "item");
  check_update_error(NULL, "SET r = list_append(r, :l)",
                     "{\":l\": {\"L\": []}}",
                     "The provided expression refers to an attribute that does not exist in the "
                     "item");
  check_update_error(p789, "SET Brand = Brand + :one", "{\":one\": {\"N\": \"1\"}}",
                     "An operand in the update expression has an incorrect data type");
  check_update_error(p789, "SET Brand = list_append(Brand, :l)", "{\":l\": {\"L\": []}}",
                     "An operand in the update expression has an incorrect data type");
  check_update_error(p789, "ADD Brand :one", "{\":one\": {\"N\": \"1\"}}",
                     "An operand in the update expression has an incorrect data type");
  check_update_error("{\"Tags\": {\"NS\": [\"1\"]}}", "ADD Tags :s", "{\":s\": {\"SS\": [\"x\"]}}",
                     "An operand in the update expression has an incorrect data type");
  check_update_error("{\"Tags\": {\"NS\": [\"1\"]}}", "DELETE Tags :s", "{\":s\": {\"SS\": [\"x\"]}}",
                     "An operand in the update expression has an incorrect data type");
  check_update_error(p789, "SET Absent.x = :one", "{\":one\": {\"N\": \"1\"}}",
                     "The document path provided in the update expression is invalid for update");
  check_update_error(p789, "SET Brand[0] = :one", "{\":one\": {\"N\": \"1\"}}",
                     "The document path provided in the update expression is invalid for update");
  check_update_error("{\"l\": {\"L\": []}}", "REMOVE l.x", "{\":one\": {\"N\": \"1\"}}",
                     "The document path provided in the update expression is invalid for update");

  /* Arithmetic past DynamoDB's range fails; the text comes from number.c. */
  struct tt_av old = item_of("{\"n\": {\"N\": \"9.9999999999999999999999999999999999999E+125\"}}");
  struct tt_av vals = item_of("{\":x\": {\"N\": \"9E+125\"}, \":y\": {\"N\": \"1E-100\"}}");
  struct tt_av out;
  struct tt_expr *e;
  struct tt_error err;
  const char *texts[] = {"SET n = n + :x", "ADD n :x", "SET n = :x + :y"};
  for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
    ck_assert_int_eq(tt_expr_parse(TT_EXPR_UPDATE, texts[i], NULL, &vals, &e, &err), 0);
    tt_error_clear(&err);
    ck_assert_int_eq(tt_expr_apply_update(e, &old, &out, &err), -1);
    ck_assert_int_eq(err.code, TT_ERR_VALIDATION);
    ck_assert_int_eq(out.type, 0);
    tt_expr_free(e);
  }
  /* The item given in was not touched. */
  struct tt_av again = item_of("{\"n\": {\"N\": \"9.9999999999999999999999999999999999999E+125\"}}");
  ck_assert(tt_av_equal(&old, &again));
  tt_av_free(&again);
  tt_av_free(&old);
  tt_av_free(&vals);
}
END_TEST

/* DynamoDB's answers recorded by dynalite's suite: elements set past the
 * end of a list are appended in the order of their indexes; UPDATED_NEW
 * names the written paths; size counts a string's characters. */
START_TEST(test_update_against_items) {
  const char *before = "{\"b\": {\"M\": {\"a\": {\"N\": \"1\"}, \"b\": {\"N\": \"2\"}, \"c\": {\"N\": "
                       "\"3\"}}}, \"c\": {\"L\": [{\"N\": \"1\"}, {\"N\": \"3\"}]}}";
  const char *text = "set b.c=((c[1])+(b.a)),b.a = :k,c[1] = :k, c[4] = b.a - b.b, c[2] = b.c "
                     "add c[8] :b, c[6] :a";
  const char *vals = "{\":a\": {\"N\": \"2\"}, \":b\": {\"SS\": [\"a\"]}, \":k\": {\"S\": \"k\"}}";
  check_update(before, text, NULL, vals,
               "{\"b\": {\"M\": {\"a\": {\"S\": \"k\"}, \"b\": {\"N\": \"2\"}, \"c\": {\"N\": "
               "\"4\"}}}, \"c\": {\"L\": [{\"N\": \"1\"}, {\"S\": \"k\"}, {\"N\": \"3\"}, {\"N\": "
               "\"-1\"}, {\"N\": \"2\"}, {\"SS\": [\"a\"]}]}}");
  struct tt_av old = item_of(before), v = item_of(vals), out, attrs;
  struct tt_expr *e;
  struct tt_error err;
  ck_assert_int_eq(tt_expr_parse(TT_EXPR_UPDATE, text, NULL, &v, &e, &err), 0);
  ck_assert_int_eq(tt_expr_apply_update(e, &old, &out, &err), 0);
  ck_assert_int_eq(tt_expr_apply_projection(e, &out, &attrs, &err), 0);
  struct tt_av want = item_of("{\"b\": {\"M\": {\"a\": {\"S\": \"k\"}, \"c\": {\"N\": \"4\"}}}, "
                              "\"c\": {\"L\": [{\"S\": \"k\"}, {\"N\": \"3\"}, {\"N\": \"2\"}]}}");
  char *got_text = wire_of(&attrs), *want_text = wire_of(&want);
  ck_assert_str_eq(got_text, want_text);
  free(got_text);
  free(want_text);
  /* What the text tells of the written types, and nested paths. */
  ck_assert_int_eq(tt_expr_update_static_type(e, "b"), 0);
  ck_assert(tt_expr_nested_under(e, "c"));
  ck_assert(!tt_expr_update_sets(e, "c"));
  tt_expr_free(e);
  ck_assert_int_eq(tt_expr_parse(TT_EXPR_UPDATE, "set x = :a + y, z = if_not_exists(q, :k) remove w "
                                        "add s :b",
                                        NULL, &v, &e, &err),
                   0);
  ck_assert_int_eq(tt_expr_update_static_type(e, "x"), TT_AV_N);
  ck_assert_int_eq(tt_expr_update_static_type(e, "z"), TT_AV_S);
  ck_assert_int_eq(tt_expr_update_static_type(e, "w"), 0);
  ck_assert_int_eq(tt_expr_update_static_type(e, "s"), TT_AV_SS);
  ck_assert(tt_expr_update_sets(e, "x") && !tt_expr_update_sets(e, "s"));
  ck_assert(!tt_expr_nested_under(e, "x"));
  tt_expr_free(e);
  tt_av_free(&want);
  tt_av_free(&attrs);
  tt_av_free(&out);
  tt_av_free(&old);
  tt_av_free(&v);
  /* A DELETE under a missing or scalar attribute names a bad path. */
  check_update_error("{\"b\": {\"S\": \"x\"}}", "DELETE b.a :s", "{\":s\": {\"SS\": [\"x\"]}}",
                     "The document path provided in the update expression is invalid for update");
  check_update_error("{\"b\": {\"S\": \"x\"}}", "DELETE y[1] :s", "{\":s\": {\"SS\": [\"x\"]}}",
                     "The document path provided in the update expression is invalid for update");
  /* size: characters, not bytes ("ab" then U+00FF; U+1F600 is two units). */
  struct tt_av item = item_of("{\"s\": {\"S\": \"ab\xc3\xbf\"}, \"e\": {\"S\": \"\xf0\x9f\x98\x80\"}}");
  struct tt_av three = item_of("{\":n\": {\"N\": \"3\"}, \":t\": {\"N\": \"2\"}}");
  ck_assert(cond("size(s) = :n", &item, NULL, &three));
  ck_assert(cond("size(e) = :t", &item, NULL, &three));
  tt_av_free(&item);
  tt_av_free(&three);
}
END_TEST

static void check_projection(const char *item_json, const char *text, const char *after) {
  struct tt_av item = item_of(item_json), out, want = item_of(after);
  struct tt_expr *e;
  struct tt_error err;
  int rc = tt_expr_parse(TT_EXPR_PROJECTION, text, NULL, NULL, &e, &err);
  ck_assert_msg(rc == 0, "parse of '%s' failed: %s", text, err.message);
  ck_assert_int_eq(tt_expr_apply_projection(e, &item, &out, &err), 0);
  char *got_text = wire_of(&out), *want_text = wire_of(&want);
  ck_assert_str_eq(got_text, want_text);
  free(got_text);
  free(want_text);
  tt_av_free(&out);
  tt_av_free(&want);
  tt_av_free(&item);
  tt_expr_free(e);
}

START_TEST(test_projections) {
  const char *item =
      "{\"Id\": {\"N\": \"1\"}, \"Description\": {\"S\": \"d\"},"
      " \"RelatedItems\": {\"L\": [{\"S\": \"a\"}, {\"S\": \"b\"}, {\"S\": \"c\"}]},"
      " \"ProductReviews\": {\"M\": {\"FiveStar\": {\"L\": [{\"S\": \"x\"}]}, \"OneStar\": {\"L\": []}}}}";
  /* The guide's example: Description, RelatedItems[0], ProductReviews.FiveStar. */
  check_projection(item, "Description, RelatedItems[0], ProductReviews.FiveStar",
                   "{\"Description\": {\"S\": \"d\"}, \"RelatedItems\": {\"L\": [{\"S\": \"a\"}]},"
                   " \"ProductReviews\": {\"M\": {\"FiveStar\": {\"L\": [{\"S\": \"x\"}]}}}}");
  /* Selected list elements keep their order, missing ones are skipped. */
  check_projection(item, "RelatedItems[2], RelatedItems[0], RelatedItems[7], Nope, Id.x",
                   "{\"RelatedItems\": {\"L\": [{\"S\": \"a\"}, {\"S\": \"c\"}]}}");
  check_projection(item, "Nope", "{}");
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("expr_eval");
  TCase *tc = tcase_create("eval");
  tcase_add_test(tc, test_guide_conditions);
  tcase_add_test(tc, test_comparison_semantics);
  tcase_add_test(tc, test_precedence);
  tcase_add_test(tc, test_guide_updates);
  tcase_add_test(tc, test_update_errors);
  tcase_add_test(tc, test_update_against_items);
  tcase_add_test(tc, test_projections);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
