/* SPDX-License-Identifier: Apache-2.0 */
/* test_memdb_update_table.c -- the memory backend's UpdateTable: a GSI
 * added to a table with items is backfilled by the projection rules of
 * indexes made with the table, maintained by later writes, counted in the
 * table's memory, and refused with DynamoDB's errors. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "backend/memory/internal.h"
#include "test_memdb.h"

#define ADD_GSI(name, key, proj)                                                                   \
  "{'TableName':'cmp','AttributeDefinitions':[{'AttributeName':'" key "','AttributeType':'S'}],"   \
  "'GlobalSecondaryIndexUpdates':[{'Create':{'IndexName':'" name "','KeySchema':[{"               \
  "'AttributeName':'" key "','KeyType':'HASH'}],'Projection':" proj "}}]}"

/* A fresh fixture whose table `cmp` holds six items, some without `g`. */
static void setup_seeded(struct fx *f) {
  fx_setup(f, NULL);
  fx_exec(f, TT_DDB_CREATE_TABLE, COMPOSITE_TABLE);
  fx_put_in(f, "cmp", "{'pk':{'S':'a'},'sk':{'N':'1'},'g':{'S':'red'},'x':{'S':'1'},'y':{'N':'1'}}");
  fx_put_in(f, "cmp", "{'pk':{'S':'a'},'sk':{'N':'2'},'g':{'S':'red'},'x':{'S':'2'}}");
  fx_put_in(f, "cmp", "{'pk':{'S':'b'},'sk':{'N':'1'},'g':{'S':'blue'}}");
  /* sparse: no g, g of another type, g empty (DynamoDB skips it) */
  fx_put_in(f, "cmp", "{'pk':{'S':'c'},'sk':{'N':'1'}}");
  fx_put_in(f, "cmp", "{'pk':{'S':'d'},'sk':{'N':'1'},'g':{'N':'7'}}");
  fx_put_in(f, "cmp", "{'pk':{'S':'e'},'sk':{'N':'1'},'g':{'S':''}}");
}

START_TEST(create_backfills_existing_items) {
  struct fx f;
  setup_seeded(&f);
  struct memdb_table *t = memdb_table_get(f.b->impl, "cmp");
  size_t before = memdb_table_mem(t);
  json_t *r = fx_ok(&f, TT_DDB_UPDATE_TABLE,
                    ADD_GSI("byG", "g", "{'ProjectionType':'INCLUDE','NonKeyAttributes':['x']}"));
  json_t *td = json_object_get(r, "TableDescription");
  json_t *g = json_array_get(json_object_get(td, "GlobalSecondaryIndexes"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(g, "IndexName")), "byG");
  ck_assert_str_eq(json_string_value(json_object_get(g, "IndexStatus")), "ACTIVE");
  ck_assert_int_eq(json_integer_value(json_object_get(g, "ItemCount")), 3);
  /* The definitions gained g; the table's own stay. */
  fx_assert_json(json_object_get(td, "AttributeDefinitions"),
                 "[{'AttributeName':'pk','AttributeType':'S'},{'AttributeName':'sk',"
                 "'AttributeType':'N'},{'AttributeName':'g','AttributeType':'S'}]");
  json_decref(r);
  /* Memory accounting counts the new index's entries. */
  ck_assert_uint_gt(memdb_table_mem(t), before);
  /* Backfilled, projected as INCLUDE: keys, index key and x only; equal
   * index keys in the order of their table keys' hash (a/2, then a/1). */
  fx_expect(&f, TT_DDB_QUERY,
            "{'TableName':'cmp','IndexName':'byG','KeyConditionExpression':'g = :g',"
            "'ExpressionAttributeValues':{':g':{'S':'red'}}}",
            "{'Items':[{'pk':{'S':'a'},'sk':{'N':'2'},'g':{'S':'red'},'x':{'S':'2'}},"
            "{'pk':{'S':'a'},'sk':{'N':'1'},'g':{'S':'red'},'x':{'S':'1'}}],'Count':2,"
            "'ScannedCount':2}");
  /* Later writes maintain it: a new item, a moved one, a deleted one. */
  fx_put_in(&f, "cmp", "{'pk':{'S':'f'},'sk':{'N':'1'},'g':{'S':'blue'}}");
  fx_put_in(&f, "cmp", "{'pk':{'S':'a'},'sk':{'N':'2'},'g':{'S':'blue'}}");
  fx_exec(&f, TT_DDB_DELETE_ITEM, "{'TableName':'cmp','Key':{'pk':{'S':'b'},'sk':{'N':'1'}}}");
  json_t *q = fx_ok(&f, TT_DDB_QUERY,
                    "{'TableName':'cmp','IndexName':'byG','KeyConditionExpression':'g = :g',"
                    "'ExpressionAttributeValues':{':g':{'S':'blue'}},'Select':'COUNT'}");
  ck_assert_int_eq(json_integer_value(json_object_get(q, "Count")), 2);
  json_decref(q);
  fx_teardown(&f);
}
END_TEST

START_TEST(keys_only_and_all_projections) {
  struct fx f;
  setup_seeded(&f);
  fx_exec(&f, TT_DDB_UPDATE_TABLE, ADD_GSI("byGk", "g", "{'ProjectionType':'KEYS_ONLY'}"));
  fx_expect(&f, TT_DDB_QUERY,
            "{'TableName':'cmp','IndexName':'byGk','KeyConditionExpression':'g = :g',"
            "'ExpressionAttributeValues':{':g':{'S':'blue'}}}",
            "{'Items':[{'pk':{'S':'b'},'sk':{'N':'1'},'g':{'S':'blue'}}],'Count':1,"
            "'ScannedCount':1}");
  /* One more, ALL: a second UpdateTable call (one create per call). */
  fx_exec(&f, TT_DDB_UPDATE_TABLE, ADD_GSI("byX", "x", "{'ProjectionType':'ALL'}"));
  fx_expect(&f, TT_DDB_QUERY,
            "{'TableName':'cmp','IndexName':'byX','KeyConditionExpression':'x = :x',"
            "'ExpressionAttributeValues':{':x':{'S':'1'}}}",
            "{'Items':[{'pk':{'S':'a'},'sk':{'N':'1'},'g':{'S':'red'},'x':{'S':'1'},"
            "'y':{'N':'1'}}],'Count':1,'ScannedCount':1}");
  json_t *d = fx_ok(&f, TT_DDB_DESCRIBE_TABLE, "{'TableName':'cmp'}");
  ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(d, "Table"),
                                                    "GlobalSecondaryIndexes")),
                    2);
  json_decref(d);
  fx_teardown(&f);
}
END_TEST

START_TEST(refusals_leave_the_table_unchanged) {
  struct fx f;
  setup_seeded(&f);
  fx_exec(&f, TT_DDB_UPDATE_TABLE, ADD_GSI("byG", "g", "{'ProjectionType':'ALL'}"));
  fx_fail(&f, TT_DDB_UPDATE_TABLE, ADD_GSI("byG", "g", "{'ProjectionType':'ALL'}"),
          "ValidationException",
          "One or more parameter values were invalid: Index with name byG already exists on "
          "table cmp");
  fx_fail(&f, TT_DDB_UPDATE_TABLE,
          "{'TableName':'cmp','GlobalSecondaryIndexUpdates':[{'Create':{'IndexName':'byZ',"
          "'KeySchema':[{'AttributeName':'z','KeyType':'HASH'}],'Projection':{"
          "'ProjectionType':'ALL'}}}]}",
          "ValidationException", "Invalid KeySchema: Some index key attribute have no definition");
  fx_fail(&f, TT_DDB_UPDATE_TABLE,
          "{'TableName':'cmp','AttributeDefinitions':[{'AttributeName':'x','AttributeType':'S'},"
          "{'AttributeName':'y','AttributeType':'N'}],'GlobalSecondaryIndexUpdates':["
          "{'Create':{'IndexName':'byX','KeySchema':[{'AttributeName':'x','KeyType':'HASH'}],"
          "'Projection':{'ProjectionType':'ALL'}}},{'Create':{'IndexName':'byY','KeySchema':"
          "[{'AttributeName':'y','KeyType':'HASH'}],'Projection':{'ProjectionType':'ALL'}}}]}",
          "LimitExceededException",
          "Subscriber limit exceeded: Only 1 online index can be created or deleted "
          "simultaneously per table");
  fx_fail(&f, TT_DDB_UPDATE_TABLE,
          "{'TableName':'cmp','AttributeDefinitions':[{'AttributeName':'pk','AttributeType':'N'}],"
          "'GlobalSecondaryIndexUpdates':[{'Create':{'IndexName':'byP','KeySchema':[{"
          "'AttributeName':'pk','KeyType':'HASH'}],'Projection':{'ProjectionType':'ALL'}}}]}",
          "ValidationException",
          "One or more parameter values were invalid: Cannot change the type of attribute pk, "
          "which is defined as a key of the table or of an index");
  fx_fail(&f, TT_DDB_UPDATE_TABLE, "{'TableName':'cmp'}", "ValidationException",
          "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
          "GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required");
  fx_fail(&f, TT_DDB_UPDATE_TABLE,
          "{'TableName':'cmp','GlobalSecondaryIndexUpdates':[{'Create':{'IndexName':'byW',"
          "'KeySchema':[{'AttributeName':'g','KeyType':'HASH'}],'Projection':{"
          "'ProjectionType':'ALL'},'ProvisionedThroughput':{'ReadCapacityUnits':1,"
          "'WriteCapacityUnits':1}}}]}",
          "ValidationException",
          "One or more parameter values were invalid: Neither ReadCapacityUnits nor "
          "WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
  fx_fail(&f, TT_DDB_UPDATE_TABLE,
          "{'TableName':'nope','AttributeDefinitions':[{'AttributeName':'g','AttributeType':'S'}],"
          "'GlobalSecondaryIndexUpdates':[{'Create':{'IndexName':'byG','KeySchema':[{"
          "'AttributeName':'g','KeyType':'HASH'}],'Projection':{'ProjectionType':'ALL'}}}]}",
          "ResourceNotFoundException", "Requested resource not found: Table: nope not found");
  /* Still one GSI, the definitions unchanged. */
  json_t *d = fx_ok(&f, TT_DDB_DESCRIBE_TABLE, "{'TableName':'cmp'}");
  json_t *t = json_object_get(d, "Table");
  ck_assert_uint_eq(json_array_size(json_object_get(t, "GlobalSecondaryIndexes")), 1);
  ck_assert_uint_eq(json_array_size(json_object_get(t, "AttributeDefinitions")), 3);
  json_decref(d);
  fx_teardown(&f);
}
END_TEST

START_TEST(at_most_twenty_gsis) {
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, COMPOSITE_TABLE);
  char req[600];
  for (int i = 0; i <= 20; i++) {
    snprintf(req, sizeof(req),
             "{'TableName':'cmp','AttributeDefinitions':[{'AttributeName':'a%02d',"
             "'AttributeType':'S'}],'GlobalSecondaryIndexUpdates':[{'Create':{'IndexName':"
             "'ix%02d','KeySchema':[{'AttributeName':'a%02d','KeyType':'HASH'}],'Projection':"
             "{'ProjectionType':'KEYS_ONLY'}}}]}",
             i, i, i);
    if (i < 20)
      fx_exec(&f, TT_DDB_UPDATE_TABLE, req);
    else
      fx_fail(&f, TT_DDB_UPDATE_TABLE, req, "LimitExceededException",
              "Subscriber limit exceeded: the table cmp already has 20 global secondary "
              "indexes");
  }
  fx_teardown(&f);
}
END_TEST

static int64_t test_now;
static int64_t test_clock(void *arg) {
  (void)arg;
  return test_now;
}

#define PROV_TABLE                                                                                 \
  "{'TableName':'prv','AttributeDefinitions':[{'AttributeName':'pk','AttributeType':'S'},"        \
  "{'AttributeName':'g','AttributeType':'S'}],'KeySchema':[{'AttributeName':'pk','KeyType':"      \
  "'HASH'}],'ProvisionedThroughput':{'ReadCapacityUnits':5,'WriteCapacityUnits':5},"              \
  "'GlobalSecondaryIndexes':[{'IndexName':'byG','KeySchema':[{'AttributeName':'g','KeyType':"     \
  "'HASH'}],'Projection':{'ProjectionType':'ALL'},'ProvisionedThroughput':{'ReadCapacityUnits':" \
  "2,'WriteCapacityUnits':2}}]}"
#define SET_PT(r, w)                                                                               \
  "{'TableName':'prv','ProvisionedThroughput':{'ReadCapacityUnits':" #r ",'WriteCapacityUnits':" \
  #w "}}"

static int64_t pt_of(json_t *desc, const char *member) {
  return json_integer_value(
      json_object_get(json_object_get(desc, "ProvisionedThroughput"), member));
}

START_TEST(throughput_and_billing_mode) {
  struct fx f;
  struct tt_memdb_options o = {.clock = test_clock};
  test_now = 1700000000; /* 2023-11-14T22:13:20Z */
  fx_setup(&f, &o);
  fx_exec(&f, TT_DDB_CREATE_TABLE, PROV_TABLE);
  /* Created without BillingMode: no BillingModeSummary, as DynamoDB. */
  json_t *r = fx_ok(&f, TT_DDB_DESCRIBE_TABLE, "{'TableName':'prv'}");
  ck_assert_ptr_null(json_object_get(json_object_get(r, "Table"), "BillingModeSummary"));
  json_decref(r);
  fx_fail(&f, TT_DDB_UPDATE_TABLE, SET_PT(5, 5), "ValidationException",
          "The provisioned throughput for the table will not change. The requested value equals "
          "the current value. Current ReadCapacityUnits provisioned for the table: 5. Requested "
          "ReadCapacityUnits: 5. Current WriteCapacityUnits provisioned for the table: 5. "
          "Requested WriteCapacityUnits: 5. Refer to the Amazon DynamoDB Developer Guide for "
          "current limits and how to request higher limits.");
  r = fx_ok(&f, TT_DDB_UPDATE_TABLE, SET_PT(15, 15));
  json_t *d = json_object_get(r, "TableDescription");
  ck_assert_int_eq(pt_of(d, "ReadCapacityUnits"), 15);
  ck_assert(json_real_value(json_object_get(json_object_get(d, "ProvisionedThroughput"),
                                            "LastIncreaseDateTime")) == 1700000000.0);
  json_decref(r);
  /* Four decreases at any time in a UTC day, then one an hour. */
  fx_exec(&f, TT_DDB_UPDATE_TABLE, SET_PT(14, 14));
  fx_exec(&f, TT_DDB_UPDATE_TABLE, SET_PT(13, 14));
  fx_exec(&f, TT_DDB_UPDATE_TABLE, SET_PT(13, 12));
  fx_exec(&f, TT_DDB_UPDATE_TABLE, SET_PT(12, 12));
  fx_exec(&f, TT_DDB_UPDATE_TABLE, SET_PT(20, 20)); /* increases are not limited */
  fx_fail(&f, TT_DDB_UPDATE_TABLE, SET_PT(10, 10), "LimitExceededException",
          "Subscriber limit exceeded: Provisioned throughput decreases are limited within a "
          "given UTC day. After the first 4 decreases, each subsequent decrease in the same UTC "
          "day can be performed at most once every 3600 seconds. Number of decreases today: 4");
  test_now += 3600;
  r = fx_ok(&f, TT_DDB_UPDATE_TABLE, SET_PT(10, 10));
  ck_assert_int_eq(pt_of(json_object_get(r, "TableDescription"), "NumberOfDecreasesToday"), 5);
  json_decref(r);
  /* A global index's throughput; an unknown index is not found. */
  r = fx_ok(&f, TT_DDB_UPDATE_TABLE,
            "{'TableName':'prv','GlobalSecondaryIndexUpdates':[{'Update':{'IndexName':'byG',"
            "'ProvisionedThroughput':{'ReadCapacityUnits':7,'WriteCapacityUnits':8}}}]}");
  json_t *gsi = json_array_get(
      json_object_get(json_object_get(r, "TableDescription"), "GlobalSecondaryIndexes"), 0);
  ck_assert_int_eq(pt_of(gsi, "WriteCapacityUnits"), 8);
  json_decref(r);
  fx_fail(&f, TT_DDB_UPDATE_TABLE,
          "{'TableName':'prv','GlobalSecondaryIndexUpdates':[{'Update':{'IndexName':'nope',"
          "'ProvisionedThroughput':{'ReadCapacityUnits':7,'WriteCapacityUnits':8}}}]}",
          "ResourceNotFoundException", "Requested resource not found: Index: nope not found");
  /* To PAY_PER_REQUEST: throughput 0, and no throughput may be given. */
  r = fx_ok(&f, TT_DDB_UPDATE_TABLE, "{'TableName':'prv','BillingMode':'PAY_PER_REQUEST'}");
  d = json_object_get(r, "TableDescription");
  ck_assert_int_eq(pt_of(d, "ReadCapacityUnits"), 0);
  ck_assert_str_eq(json_string_value(json_object_get(
                       json_object_get(d, "TableThroughputModeSummary"), "TableThroughputMode")),
                   "PAY_PER_REQUEST");
  json_decref(r);
  fx_fail(&f, TT_DDB_UPDATE_TABLE, SET_PT(3, 3), "ValidationException",
          "One or more parameter values were invalid: Neither ReadCapacityUnits nor "
          "WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
  /* Back to PROVISIONED: every global index needs its throughput. */
  fx_fail(&f, TT_DDB_UPDATE_TABLE,
          "{'TableName':'prv','BillingMode':'PROVISIONED','ProvisionedThroughput':{"
          "'ReadCapacityUnits':3,'WriteCapacityUnits':3}}",
          "ValidationException",
          "One or more parameter values were invalid: ProvisionedThroughput must be specified "
          "for index: byG");
  r = fx_ok(&f, TT_DDB_UPDATE_TABLE,
            "{'TableName':'prv','BillingMode':'PROVISIONED','ProvisionedThroughput':{"
            "'ReadCapacityUnits':3,'WriteCapacityUnits':4},'GlobalSecondaryIndexUpdates':[{"
            "'Update':{'IndexName':'byG','ProvisionedThroughput':{'ReadCapacityUnits':1,"
            "'WriteCapacityUnits':1}}}]}");
  d = json_object_get(r, "TableDescription");
  ck_assert_int_eq(pt_of(d, "WriteCapacityUnits"), 4);
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(d, "BillingModeSummary"),
                                                     "BillingMode")),
                   "PROVISIONED");
  json_decref(r);
  fx_teardown(&f);
}
END_TEST

START_TEST(table_transitions) {
  struct fx f;
  struct tt_memdb_options o = {.transition_ms = 3600000};
  fx_setup(&f, &o);
  json_t *r = fx_ok(&f, TT_DDB_CREATE_TABLE, PROV_TABLE);
  json_t *d = json_object_get(r, "TableDescription");
  ck_assert_str_eq(json_string_value(json_object_get(d, "TableStatus")), "CREATING");
  ck_assert_str_eq(json_string_value(json_object_get(
                       json_array_get(json_object_get(d, "GlobalSecondaryIndexes"), 0),
                       "IndexStatus")),
                   "CREATING");
  json_decref(r);
  r = fx_ok(&f, TT_DDB_DESCRIBE_TABLE, "{'TableName':'prv'}");
  ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "Table"), "TableStatus")),
                   "CREATING");
  json_decref(r);
  /* A CREATING table is not found by item operations, nor deleted. */
  fx_fail(&f, TT_DDB_GET_ITEM, "{'TableName':'prv','Key':{'pk':{'S':'a'}}}",
          "ResourceNotFoundException", "Requested resource not found");
  fx_fail(&f, TT_DDB_DELETE_TABLE, "{'TableName':'prv'}", "ResourceInUseException",
          "Attempt to change a resource which is still in use: Table is being created: prv");
  fx_teardown(&f);

  /* A short transition: ACTIVE once it passed; UPDATING shows the old
   * throughput, then the new one; DELETING, then gone. */
  o.transition_ms = 1;
  fx_setup(&f, &o);
  fx_exec(&f, TT_DDB_CREATE_TABLE, PROV_TABLE);
  usleep(3000);
  r = fx_ok(&f, TT_DDB_UPDATE_TABLE, SET_PT(9, 9));
  d = json_object_get(r, "TableDescription");
  ck_assert_str_eq(json_string_value(json_object_get(d, "TableStatus")), "UPDATING");
  ck_assert_int_eq(pt_of(d, "ReadCapacityUnits"), 5);
  json_decref(r);
  usleep(3000);
  r = fx_ok(&f, TT_DDB_DESCRIBE_TABLE, "{'TableName':'prv'}");
  d = json_object_get(r, "Table");
  ck_assert_str_eq(json_string_value(json_object_get(d, "TableStatus")), "ACTIVE");
  ck_assert_int_eq(pt_of(d, "ReadCapacityUnits"), 9);
  json_decref(r);
  r = fx_ok(&f, TT_DDB_DELETE_TABLE, "{'TableName':'prv'}");
  d = json_object_get(r, "TableDescription");
  ck_assert_str_eq(json_string_value(json_object_get(d, "TableStatus")), "DELETING");
  ck_assert_ptr_null(json_object_get(d, "GlobalSecondaryIndexes"));
  json_decref(r);
  usleep(3000);
  fx_fail(&f, TT_DDB_DESCRIBE_TABLE, "{'TableName':'prv'}", "ResourceNotFoundException",
          "Requested resource not found: Table: prv not found");
  fx_teardown(&f);
}
END_TEST

int main(void) {
  Suite *s = suite_create("memdb_update_table");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, create_backfills_existing_items);
  tcase_add_test(tc, keys_only_and_all_projections);
  tcase_add_test(tc, refusals_leave_the_table_unchanged);
  tcase_add_test(tc, at_most_twenty_gsis);
  tcase_add_test(tc, throughput_and_billing_mode);
  tcase_add_test(tc, table_transitions);
  suite_add_tcase(s, tc);
  return fx_run_suite(s);
}
