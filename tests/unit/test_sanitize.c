/* SPDX-License-Identifier: Apache-2.0 */
/* test_sanitize.c -- table-driven tests of the ledger's redaction and masking rules. */
#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/sanitize.h"

/* JSON in the tables is written with ' for " to stay readable; a real
 * apostrophe is written \u0027. */
static json_t *load(const char *text) {
  size_t n = strlen(text);
  char *s = malloc(n + 1);
  ck_assert_ptr_nonnull(s);
  for (size_t i = 0; i <= n; i++)
    s[i] = text[i] == '\'' ? '"' : text[i];
  json_error_t jerr;
  json_t *v = json_loads(s, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
  if (v == NULL)
    ck_abort_msg("bad test JSON %s: %s", text, jerr.text);
  free(s);
  return v;
}

static void assert_json_eq(json_t *got, json_t *want, const char *row) {
  if (!json_equal(got, want)) {
    char *g = json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT);
    char *w = json_dumps(want, JSON_ENCODE_ANY | JSON_COMPACT);
    ck_abort_msg("row %s: got %s, want %s", row, g ? g : "(null)", w ? w : "(null)");
  }
}

/* ---- key rules ---------------------------------------------------------- */

struct key_row {
  const char *key;
  size_t len; /* 0: strlen(key) */
  enum tt_sanitize_rule rule;
};

#define R TT_SANITIZE_RULE_REDACT
#define C TT_SANITIZE_RULE_CARD
#define L TT_SANITIZE_RULE_LAST4
#define A TT_SANITIZE_RULE_ALLOW
#define N TT_SANITIZE_RULE_NONE

static const struct key_row key_rows[] = {
    /* the redacted names of docs/ledger.md */
    {"password", 0, R}, {"secret", 0, R}, {"token", 0, R}, {"access_token", 0, R},
    {"refresh_token", 0, R}, {"id_token", 0, R}, {"client_secret", 0, R}, {"api_key", 0, R},
    {"api_token", 0, R}, {"private_key", 0, R}, {"authorization", 0, R}, {"cvv", 0, R},
    {"cvc", 0, R}, {"security_code", 0, R},
    /* case, '_', '-', space variants */
    {"PASSWORD", 0, R}, {"Api-Key", 0, R}, {"api key", 0, R}, {"API_KEY", 0, R},
    {"apiKey", 0, R}, {"Client-Secret", 0, R}, {"x-api-key", 0, R}, {"Security Code", 0, R},
    {"_password_", 0, R}, {"p_a-s s\r\nword", 0, R},
    /* *token*, *secret*, *password* segments */
    {"db_password", 0, R}, {"aws_secret_access_key", 0, R}, {"X-Auth-Token", 0, R},
    {"githubToken", 0, R}, {"SessionToken", 0, R}, {"password_hash", 0, R},
    {"tokens", 0, R}, {"secretary", 0, R}, {"tokenizer", 0, R},
    /* redaction beats masking */
    {"card_number_token", 0, R}, {"secret_account_number", 0, R},
    /* card rule */
    {"card_number", 0, C}, {"pan", 0, C}, {"primary_account_number", 0, C},
    {"PrimaryAccountNumber", 0, C}, {"Card-Number", 0, C}, {"credit_card_number", 0, C},
    /* last-4 rule */
    {"ssn", 0, L}, {"SSN", 0, L}, {"account_number", 0, L}, {"tax_id", 0, L}, {"tin", 0, L},
    {"ein", 0, L}, {"TaxId", 0, L}, {"bank_account_number", 0, L},
    /* allowlist, which wins over the segment rule */
    {"card_brand", 0, A}, {"card_bin", 0, A}, {"merchant_id", 0, A}, {"transaction_id", 0, A},
    {"Transaction-ID", 0, A}, {"token_type", 0, A}, {"max_tokens", 0, A},
    /* near misses stay ordinary */
    {"author", 0, N}, {"key", 0, N}, {"pass", 0, N}, {"panel", 0, N}, {"tinder", 0, N},
    {"martin", 0, N}, {"protein", 0, N}, {"lesson", 0, N}, {"card", 0, N}, {"status", 0, N}, {"", 0, N}, {"_-", 0, N},
    {"\xd0\xbf\xd0\xb0\xd1\x80\xd0\xbe\xd0\xbb\xd1\x8c", 0, N}, /* Russian "password" */
    /* NUL is ignored like CR/LF; bytes after it still count */
    {"pass\0word", 9, R}, {"ss\0n", 4, L}, {"ssn\0x", 5, N},
};

START_TEST(test_key_rule) {
  const struct key_row *r = &key_rows[_i];
  size_t len = r->len ? r->len : strlen(r->key);
  ck_assert_msg(tt_sanitize_key_rule(r->key, len) == r->rule, "key row %d (%s): got %d want %d",
                _i, r->key, (int)tt_sanitize_key_rule(r->key, len), (int)r->rule);
}
END_TEST

/* ---- tt_sanitize_json --------------------------------------------------- */

struct json_row {
  const char *name;
  const char *in;
  const char *want;
};

static const struct json_row json_rows[] = {
    /* redaction, any value type */
    {"redact string", "{'password':'hunter2'}", "{'password':'[REDACTED]'}"},
    {"redact number", "{'pin':1234}", "{'pin':'[REDACTED]'}"},
    {"redact real", "{'secret':1.5}", "{'secret':'[REDACTED]'}"},
    {"redact bool", "{'token':true}", "{'token':'[REDACTED]'}"},
    {"redact null", "{'api_key':null}", "{'api_key':'[REDACTED]'}"},
    {"redact empty", "{'cvv':''}", "{'cvv':'[REDACTED]'}"},
    {"redact object", "{'authorization':{'scheme':'Bearer','v':'x'}}",
     "{'authorization':'[REDACTED]'}"},
    {"redact list", "{'refresh_token':['a','b']}", "{'refresh_token':'[REDACTED]'}"},
    {"redact case/dash/space", "{'Access-Token':'a','API KEY':'b','Client_Secret':'c'}",
     "{'Access-Token':'[REDACTED]','API KEY':'[REDACTED]','Client_Secret':'[REDACTED]'}"},
    {"redact segments", "{'db_password':'a','awsSecretAccessKey':'b','x-auth-token':'c'}",
     "{'db_password':'[REDACTED]','awsSecretAccessKey':'[REDACTED]','x-auth-token':'[REDACTED]'}"},
    /* allowlist */
    {"allowlist stays",
     "{'card_brand':'visa','card_bin':'411111','merchant_id':'m-1','transaction_id':'t-9'}",
     "{'card_brand':'visa','card_bin':'411111','merchant_id':'m-1','transaction_id':'t-9'}"},
    {"token_type stays", "{'token_type':'Bearer','access_token':'abc'}",
     "{'token_type':'Bearer','access_token':'[REDACTED]'}"},
    {"token counters stay", "{'max_tokens':100,'input_tokens':7}",
     "{'max_tokens':100,'input_tokens':7}"},
    {"allowlisted value still walked", "{'merchant_id':{'password':'x','name':'m'}}",
     "{'merchant_id':{'password':'[REDACTED]','name':'m'}}"},
    {"allowlisted string loses CR/LF", "{'transaction_id':'t\\r\\n1'}",
     "{'transaction_id':'t1'}"},
    /* card numbers: digits only counted, separators dropped */
    {"card 16", "{'card_number':'4111111111111111'}", "{'card_number':'411111******1111'}"},
    {"card spaces kept", "{'card_number':'4111 1111 1111 1111'}",
     "{'card_number':'4111 11** **** 1111'}"},
    {"card dashes kept", "{'pan':'5500-0000-0000-0004'}", "{'pan':'5500-00**-****-0004'}"},
    {"card amex layout", "{'pan':'3782 822463 10005'}", "{'pan':'3782 82**** *0005'}"},
    {"card 19", "{'primary_account_number':'6011000990139424123'}",
     "{'primary_account_number':'601100*********4123'}"},
    {"card 13", "{'card_number':'4222222222222'}", "{'card_number':'422222***2222'}"},
    {"card 12 keeps last 4 only", "{'card_number':'123456789012'}",
     "{'card_number':'********9012'}"},
    {"card 4 digits all masked", "{'card_number':'1234'}", "{'card_number':'****'}"},
    {"card empty", "{'card_number':''}", "{'card_number':''}"},
    {"card CR/LF", "{'card_number':'4111111111\\r\\n111111'}",
     "{'card_number':'411111******1111'}"},
    {"card letters redacted", "{'card_number':'tok_4111111111111111'}",
     "{'card_number':'[REDACTED]'}"},
    {"card integer", "{'card_number':4111111111111111}", "{'card_number':'411111******1111'}"},
    {"card real redacted", "{'card_number':4.111111111111111e15}",
     "{'card_number':'[REDACTED]'}"},
    {"card null redacted", "{'card_number':null}", "{'card_number':'[REDACTED]'}"},
    {"card object redacted", "{'pan':{'n':'4111111111111111'}}", "{'pan':'[REDACTED]'}"},
    {"card list", "{'card_number':['4111111111111111',5500000000000004,true]}",
     "{'card_number':['411111******1111','550000******0004','[REDACTED]']}"},
    {"markers under mask keys stay", "{'ssn':'[REDACTED]','pan':['[TRUNCATED]']}",
     "{'ssn':'[REDACTED]','pan':['[TRUNCATED]']}"},
    {"card already masked", "{'card_number':'411111******1111'}",
     "{'card_number':'411111******1111'}"},
    {"card suffix key", "{'Credit-Card-Number':'4111111111111111'}",
     "{'Credit-Card-Number':'411111******1111'}"},
    /* last 4: every character but the last 4 */
    {"ssn dashed", "{'ssn':'123-45-6789'}", "{'ssn':'*******6789'}"},
    {"ssn integer", "{'SSN':123456789}", "{'SSN':'*****6789'}"},
    {"account number", "{'account_number':'000123456789'}",
     "{'account_number':'********6789'}"},
    {"tax ids", "{'tax_id':'12-3456789','tin':'987654321','ein':'12-3456789'}",
     "{'tax_id':'******6789','tin':'*****4321','ein':'******6789'}"},
    {"last4 short all masked", "{'ssn':'123'}", "{'ssn':'***'}"},
    {"last4 exactly 4 all masked", "{'tin':'1234'}", "{'tin':'****'}"},
    {"last4 unicode by code point", "{'account_number':'\xc3\x84\xc3\x96\xc3\x9c" "12345'}",
     "{'account_number':'****2345'}"},
    {"last4 CR/LF dropped first", "{'ssn':'123\\r\\n456789'}", "{'ssn':'*****6789'}"},
    {"last4 object redacted", "{'ssn':{'v':'123456789'}}", "{'ssn':'[REDACTED]'}"},
    {"last4 bool redacted", "{'ssn':false}", "{'ssn':'[REDACTED]'}"},
    {"last4 suffix key", "{'bank_account_number':'DE8937040044053201300'}",
     "{'bank_account_number':'*****************1300'}"},
    /* CR/LF in keys and values */
    {"CR/LF in value", "{'note':'line1\\r\\nline2\\n'}", "{'note':'line1line2'}"},
    {"CR/LF in key", "{'na\\r\\nme':'x'}", "{'name':'x'}"},
    {"CR/LF hides no key", "{'pass\\nword':'x'}", "{'password':'[REDACTED]'}"},
    {"keys colliding after strip: later wins", "{'a\\n':1,'a':2}", "{'a':2}"},
    /* unicode and ordinary data untouched */
    {"unicode untouched",
     "{'name':'\xe6\x97\xa5\xe6\x9c\xac \xe2\x98\x83 \xc3\xbc','sep':'a\\u2028b'}",
     "{'name':'\xe6\x97\xa5\xe6\x9c\xac \xe2\x98\x83 \xc3\xbc','sep':'a\\u2028b'}"},
    {"unicode key untouched", "{'\xd0\xbf\xd0\xb0\xd1\x80\xd0\xbe\xd0\xbb\xd1\x8c':'x'}",
     "{'\xd0\xbf\xd0\xb0\xd1\x80\xd0\xbe\xd0\xbb\xd1\x8c':'x'}"},
    {"scalars copied", "{'status':'FAILED','n':3,'r':1.5,'ok':true,'no':false,'z':null}",
     "{'status':'FAILED','n':3,'r':1.5,'ok':true,'no':false,'z':null}"},
    {"free text in structured value not scanned", "{'detail':'password=abc'}",
     "{'detail':'password=abc'}"},
    {"digits under ordinary key stay", "{'order_ref':'4111111111111111'}",
     "{'order_ref':'4111111111111111'}"},
    /* nesting */
    {"nested list of maps",
     "{'a':[{'token':'x','k':1},{'b':[{'ssn':'123456789'},{'card_number':'4111111111111111'}]}]}",
     "{'a':[{'token':'[REDACTED]','k':1},{'b':[{'ssn':'*****6789'},"
     "{'card_number':'411111******1111'}]}]}"},
    {"top-level list", "[{'password':'x'},'a\\nb',7]", "[{'password':'[REDACTED]'},'ab',7]"},
    {"top-level string", "'a\\r\\nb'", "'ab'"},
    {"top-level number", "42", "42"},
    {"top-level null", "null", "null"},
    {"empty containers", "{'a':{},'b':[]}", "{'a':{},'b':[]}"},
};

START_TEST(test_json_row) {
  const struct json_row *r = &json_rows[_i];
  json_t *in = load(r->in);
  json_t *want = load(r->want);
  json_t *before = json_deep_copy(in);
  json_t *got = tt_sanitize_json(in);
  ck_assert_ptr_nonnull(got);
  assert_json_eq(got, want, r->name);
  /* The input is untouched. */
  assert_json_eq(in, before, r->name);
  /* Sanitizing is idempotent: a stored, sanitized envelope stays as it is. */
  json_t *again = tt_sanitize_json(got);
  assert_json_eq(again, got, r->name);
  json_decref(again);
  json_decref(got);
  json_decref(before);
  json_decref(want);
  json_decref(in);
}
END_TEST

START_TEST(test_json_new_copy) {
  json_t *in = load("{'a':{'b':['x']},'s':'y'}");
  json_t *got = tt_sanitize_json(in);
  ck_assert_ptr_nonnull(got);
  ck_assert_ptr_ne(got, in);
  /* Shares no node: the nested containers and strings are new. */
  ck_assert_ptr_ne(json_object_get(got, "a"), json_object_get(in, "a"));
  ck_assert_ptr_ne(json_object_get(json_object_get(got, "a"), "b"),
                   json_object_get(json_object_get(in, "a"), "b"));
  ck_assert_ptr_ne(json_object_get(got, "s"), json_object_get(in, "s"));
  ck_assert_int_eq(in->refcount, 1);
  ck_assert_int_eq(got->refcount, 1);
  json_decref(got);
  json_decref(in);
  ck_assert_ptr_null(tt_sanitize_json(NULL));
}
END_TEST

START_TEST(test_json_nul_in_key) {
  /* jansson's parser refuses NUL in keys, but the API allows them. */
  json_t *in = json_object();
  json_object_setn_new(in, "to\0ken", 6, json_string("x"));
  json_object_setn_new(in, "a\0b", 3, json_string("y"));
  json_t *got = tt_sanitize_json(in);
  json_t *want = load("{'token':'[REDACTED]','ab':'y'}");
  assert_json_eq(got, want, "NUL in key");
  json_decref(want);
  json_decref(got);
  json_decref(in);
}
END_TEST

/* n arrays (or objects {"k":...}) around `leaf`. */
static json_t *nest(int n, json_t *leaf, bool objects) {
  json_t *v = leaf;
  for (int i = 0; i < n; i++) {
    json_t *c = objects ? json_object() : json_array();
    if (objects)
      json_object_set_new(c, "k", v);
    else
      json_array_append_new(c, v);
    v = c;
  }
  return v;
}

START_TEST(test_depth_limit) {
  bool objects = _i == 1;
  /* 32 levels survive whole. */
  json_t *in = nest(TT_SANITIZE_MAX_DEPTH, json_string("x"), objects);
  json_t *got = tt_sanitize_json(in);
  assert_json_eq(got, in, "depth 32");
  json_decref(got);
  json_decref(in);
  /* The 33rd level becomes [TRUNCATED]. */
  in = nest(TT_SANITIZE_MAX_DEPTH + 1, json_string("x"), objects);
  json_t *want = nest(TT_SANITIZE_MAX_DEPTH, json_string(TT_SANITIZE_TRUNCATED), objects);
  got = tt_sanitize_json(in);
  assert_json_eq(got, want, "depth 33");
  json_decref(got);
  json_decref(want);
  json_decref(in);
  /* Much deeper input stops at the same level. */
  in = nest(1000, json_string("x"), objects);
  got = tt_sanitize_json(in);
  assert_json_eq(got, want = nest(TT_SANITIZE_MAX_DEPTH, json_string(TT_SANITIZE_TRUNCATED),
                                  objects),
                 "depth 1000");
  json_decref(got);
  json_decref(want);
  json_decref(in);
}
END_TEST

START_TEST(test_depth_limit_card_lists) {
  /* Lists under a card key count levels the same way: the map is level 1. */
  json_t *in = json_object();
  json_object_set_new(in, "card_number",
                      nest(TT_SANITIZE_MAX_DEPTH, json_string("4111111111111111"), false));
  json_t *want = json_object();
  json_object_set_new(want, "card_number",
                      nest(TT_SANITIZE_MAX_DEPTH - 1, json_string(TT_SANITIZE_TRUNCATED), false));
  json_t *got = tt_sanitize_json(in);
  assert_json_eq(got, want, "card lists");
  json_decref(got);
  json_decref(want);
  json_decref(in);
}
END_TEST

/* ---- tt_sanitize_text --------------------------------------------------- */

struct text_row {
  const char *in;
  const char *want;
};

static const struct text_row text_rows[] = {
    /* key=value / key: value */
    {"login failed: password=hunter2", "login failed: password=[REDACTED]"},
    {"password: hunter2 and more", "password: [REDACTED] and more"},
    {"token: abc.def, next", "token: [REDACTED], next"},
    {"Client-Secret = abc;x=1", "Client-Secret = [REDACTED];x=1"},
    {"x-api-key: abc", "x-api-key: [REDACTED]"},
    {"db.password=abc", "db.password=[REDACTED]"},
    {"pin=1234 cvv: 123", "pin=[REDACTED] cvv: [REDACTED]"},
    {"client_secret = 's3 cr3t' end", "client_secret = '[REDACTED]' end"},
    {"GET /cb?access_token=abc&state=xyz", "GET /cb?access_token=[REDACTED]&state=xyz"},
    {"{\"password\":\"hun\\\"ter2\",\"user\":\"bob\"}",
     "{\"password\":\"[REDACTED]\",\"user\":\"bob\"}"},
    {"{\\\"api_key\\\":\\\"k1\\\"}", "{\\\"api_key\\\":\\\"[REDACTED]\\\"}"},
    {"opts => {secret => abc}", "opts => {secret => [REDACTED]}"},
    {"[password=abc]", "[password=[REDACTED]]"},
    /* bearer tokens */
    {"Authorization: Bearer abc123", "Authorization: Bearer [REDACTED]"},
    {"authorization=Basic dXNlcjpwdw==", "authorization=Basic [REDACTED]"},
    {"peer sent Bearer abc-123.x_y~z+/= ok", "peer sent Bearer [REDACTED] ok"},
    {"bearer   abc", "bearer   [REDACTED]"},
    {"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc_DEF-1 seen", "jwt [REDACTED] seen"},
    /* URL passwords */
    {"connect postgres://app:s3cret@db:5432/x failed",
     "connect postgres://[REDACTED]@db:5432/x failed"},
    {"mongodb://u:p@ss@h/db", "mongodb://[REDACTED]@h/db"},
    {"clone https://ghp_abc@github.com/o/r", "clone https://[REDACTED]@github.com/o/r"},
    {"see http://[::1]:8080/a@b", "see http://[::1]:8080/a@b"},
    /* card-like digit runs */
    {"card 4111111111111111 declined", "card 411111******1111 declined"},
    {"4111 1111 1111 1111", "4111 11** **** 1111"},
    {"n=4111-1111-1111-1111.", "n=4111-11**-****-1111."},
    {"id4111111111111111", "id411111******1111"},
    {"at 1700000000000 ms", "at 170000***0000 ms"},
    {"order 123456789012 ok", "order 123456789012 ok"},
    {"date 2024-01-15 12:30", "date 2024-01-15 12:30"},
    {"card_number=4111 1111 1111 1111, ok", "card_number=4111 11** **** 1111, ok"},
    {"card_number: tok_abc", "card_number: [REDACTED]"},
    {"card_number=4111111111111111.password=x", "card_number=411111******1111.password=[REDACTED]"},
    /* last 4 */
    {"ssn: 123-45-6789", "ssn: *******6789"},
    {"SSN 123-45-6789 on file", "SSN ***-**-6789 on file"},
    {"account_number=000123456789 x", "account_number=********6789 x"},
    /* CR/LF */
    {"line1\r\nline2\n", "line1 line2"},
    {"\r\n\nlead", "lead"},
    {"pass\nword=abc", "pass word=abc"},
    {"upstream said\r\nBearer abc", "upstream said Bearer [REDACTED]"},
    {"id\npin=1234", "id pin=[REDACTED]"},
    {"4111111111\n111111", "411111**** **1111"},
    /* untouched */
    {"ünïcödé ☃ 日本 a\u2028b", "ünïcödé ☃ 日本 a\u2028b"},
    {"Invalid password.", "Invalid password."},
    {"token expired", "token expired"},
    {"the secret is out", "the secret is out"},
    {"Error: timeout after 3 attempts", "Error: timeout after 3 attempts"},
    {"token_type=Bearer", "token_type=Bearer"},
    {"password=", "password="},
    {"", ""},
    /* already sanitized text stays as it is */
    {"password=[REDACTED]", "password=[REDACTED]"},
    {"Authorization: Bearer [REDACTED]", "Authorization: Bearer [REDACTED]"},
    {"x 411111******1111 ***-**-6789", "x 411111******1111 ***-**-6789"},
    {"x 4111 11** **** 1111", "x 4111 11** **** 1111"},
};

START_TEST(test_text_row) {
  const struct text_row *r = &text_rows[_i];
  size_t n = 0;
  char *got = tt_sanitize_text(r->in, strlen(r->in), &n);
  ck_assert_ptr_nonnull(got);
  ck_assert_msg(strcmp(got, r->want) == 0, "text row %d: got <%s> want <%s>", _i, got, r->want);
  ck_assert_uint_eq(n, strlen(r->want));
  char *again = tt_sanitize_text(got, n, NULL);
  ck_assert_str_eq(again, got);
  free(again);
  free(got);
}
END_TEST

START_TEST(test_text_embedded_nul) {
  /* Lengths are honoured: bytes after a NUL are sanitized too. */
  static const char in[] = "a\0password=x";
  size_t n = 0;
  char *got = tt_sanitize_text(in, sizeof in - 1, &n);
  ck_assert_uint_eq(n, 2 + strlen("password=[REDACTED]"));
  ck_assert_int_eq(memcmp(got, "a\0password=[REDACTED]", n), 0);
  free(got);
}
END_TEST

/* ---- tt_sanitize_error_envelope ----------------------------------------- */

struct env_row {
  const char *name;
  const char *in;
  const char *want;      /* NULL: an error is expected */
  enum tt_err_code code; /* when want is NULL */
  const char *field;
};

static const struct env_row env_rows[] = {
    {"full envelope",
     "{'type':'Validation','code':'BadCard','message':'card 4111111111111111 rejected, "
     "password=abc','retryable':false,'fields':{'card_number':'4111111111111111',"
     "'api_key':'k','field':'email'}}",
     "{'type':'Validation','code':'BadCard','message':'card 411111******1111 rejected, "
     "password=[REDACTED]','retryable':false,'fields':{'card_number':'411111******1111',"
     "'api_key':'[REDACTED]','field':'email'}}",
     0, NULL},
    {"message CR/LF and bearer", "{'message':'upstream said\\r\\nBearer abc','retryable':true}",
     "{'message':'upstream said Bearer [REDACTED]','retryable':true}", 0, NULL},
    {"type and code are text too", "{'type':'a\\nb','code':'token=x'}",
     "{'type':'a b','code':'token=[REDACTED]'}", 0, NULL},
    {"fields nested", "{'fields':{'items':[{'ssn':'123456789','name':'n\\r'}]}}",
     "{'fields':{'items':[{'ssn':'*****6789','name':'n'}]}}", 0, NULL},
    {"empty", "{}", "{}", 0, NULL},
    {"nulls dropped", "{'type':null,'code':null,'message':null,'retryable':null,'fields':null}",
     "{}", 0, NULL},
    {"extra members by map rules", "{'message':'m','token':'t','detail':'password=x'}",
     "{'message':'m','token':'[REDACTED]','detail':'password=x'}", 0, NULL},
    {"extra member posing as message dropped", "{'message':'ok','message\\n':'password=x'}",
     "{'message':'ok'}", 0, NULL},
    {"not an object", "'boom'", NULL, TT_ERR_VALIDATION, "error"},
    {"list", "[]", NULL, TT_ERR_VALIDATION, "error"},
    {"type not a string", "{'type':true}", NULL, TT_ERR_VALIDATION, "error.type"},
    {"code not a string", "{'code':500}", NULL, TT_ERR_VALIDATION, "error.code"},
    {"message not a string", "{'message':4111111111111111}", NULL, TT_ERR_VALIDATION,
     "error.message"},
    {"retryable not a boolean", "{'retryable':'yes'}", NULL, TT_ERR_VALIDATION,
     "error.retryable"},
    {"fields not an object", "{'fields':['a']}", NULL, TT_ERR_VALIDATION, "error.fields"},
};

START_TEST(test_envelope_row) {
  const struct env_row *r = &env_rows[_i];
  json_t *in = load(r->in);
  json_t *before = json_deep_copy(in);
  json_t *out = (json_t *)&out; /* must be reset to NULL on failure */
  struct tt_error err;
  tt_error_clear(&err);
  int rc = tt_sanitize_error_envelope(in, &out, &err);
  if (r->want) {
    ck_assert_msg(rc == 0, "row %s: %s", r->name, err.message);
    json_t *want = load(r->want);
    assert_json_eq(out, want, r->name);
    json_decref(want);
    json_decref(out);
  } else {
    ck_assert_int_eq(rc, -1);
    ck_assert_ptr_null(out);
    ck_assert_int_eq(err.code, r->code);
    ck_assert_str_eq(err.field, r->field);
    /* Names the field, never the value. */
    ck_assert_ptr_null(strstr(err.message, "4111"));
    ck_assert_ptr_null(strstr(err.message, "yes"));
    ck_assert_ptr_null(strstr(err.message, "boom"));
  }
  assert_json_eq(in, before, r->name);
  json_decref(before);
  json_decref(in);
}
END_TEST

START_TEST(test_envelope_messages) {
  json_t *in = load("{'message':5}");
  json_t *out = NULL;
  struct tt_error err;
  ck_assert_int_eq(tt_sanitize_error_envelope(in, &out, &err), -1);
  ck_assert_str_eq(err.message, "error.message must be a string");
  json_decref(in);
  in = load("{'retryable':1}");
  ck_assert_int_eq(tt_sanitize_error_envelope(in, &out, &err), -1);
  ck_assert_str_eq(err.message, "error.retryable must be a boolean");
  json_decref(in);
}
END_TEST

START_TEST(test_envelope_depth) {
  /* The envelope is level 1 and fields level 2: 30 more levels fit. */
  json_t *in = json_object();
  json_t *fields = json_object();
  json_object_set_new(fields, "a", nest(TT_SANITIZE_MAX_DEPTH - 1, json_string("x"), false));
  json_object_set_new(in, "fields", fields);
  json_t *want = json_object();
  json_t *wfields = json_object();
  json_object_set_new(wfields, "a",
                      nest(TT_SANITIZE_MAX_DEPTH - 2, json_string(TT_SANITIZE_TRUNCATED), false));
  json_object_set_new(want, "fields", wfields);
  json_t *out = NULL;
  struct tt_error err;
  ck_assert_int_eq(tt_sanitize_error_envelope(in, &out, &err), 0);
  assert_json_eq(out, want, "envelope depth");
  json_decref(out);
  json_decref(want);
  json_decref(in);
}
END_TEST

/* ---- allocation failures ------------------------------------------------ */

static long alloc_budget = -1; /* allocations left before failing; -1 = unlimited */

static void *budget_malloc(size_t n) {
  if (alloc_budget == 0)
    return NULL;
  if (alloc_budget > 0)
    alloc_budget--;
  return malloc(n);
}

START_TEST(test_json_alloc_failure) {
  /* Every jansson allocation failing in turn yields NULL (or -1 with
   * Internal), never a partial result; ASan's leak check covers cleanup. */
  json_set_alloc_funcs(budget_malloc, free);
  json_t *in = load("{'a':[{'token':'x','card_number':'4111111111111111'},'s\\n'],"
                    "'ssn':123456789,'k':{'n':1}}");
  json_t *want = tt_sanitize_json(in);
  ck_assert_ptr_nonnull(want);
  bool succeeded = false;
  for (long budget = 0; budget < 1000 && !succeeded; budget++) {
    alloc_budget = budget;
    json_t *got = tt_sanitize_json(in);
    alloc_budget = -1;
    if (got) {
      assert_json_eq(got, want, "alloc");
      succeeded = true;
    }
    json_decref(got);
  }
  ck_assert(succeeded);

  json_t *env = load("{'message':'password=x','fields':{'a':[1,{'b':'c'}]},'retryable':true}");
  succeeded = false;
  for (long budget = 0; budget < 1000 && !succeeded; budget++) {
    json_t *out = NULL;
    struct tt_error err;
    alloc_budget = budget;
    int rc = tt_sanitize_error_envelope(env, &out, &err);
    alloc_budget = -1;
    if (rc == 0) {
      succeeded = true;
      json_decref(out);
    } else {
      ck_assert_ptr_null(out);
      ck_assert_int_eq(err.code, TT_ERR_INTERNAL);
    }
  }
  ck_assert(succeeded);
  json_decref(env);
  json_decref(want);
  json_decref(in);
  json_set_alloc_funcs(malloc, free);
}
END_TEST

#define ROWS(t) ((int)(sizeof(t) / sizeof((t)[0])))

static Suite *sanitize_suite(void) {
  Suite *s = suite_create("sanitize");
  TCase *tc = tcase_create("rules");
  tcase_add_loop_test(tc, test_key_rule, 0, ROWS(key_rows));
  tcase_add_loop_test(tc, test_json_row, 0, ROWS(json_rows));
  tcase_add_test(tc, test_json_new_copy);
  tcase_add_test(tc, test_json_nul_in_key);
  tcase_add_loop_test(tc, test_depth_limit, 0, 2);
  tcase_add_test(tc, test_depth_limit_card_lists);
  tcase_add_loop_test(tc, test_text_row, 0, ROWS(text_rows));
  tcase_add_test(tc, test_text_embedded_nul);
  tcase_add_loop_test(tc, test_envelope_row, 0, ROWS(env_rows));
  tcase_add_test(tc, test_envelope_messages);
  tcase_add_test(tc, test_envelope_depth);
  tcase_add_test(tc, test_json_alloc_failure);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(sanitize_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
