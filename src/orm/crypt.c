/* SPDX-License-Identifier: Apache-2.0 */
/* crypt.c -- encrypted attributes on the item paths: refusals before I/O and
 * the KMS fan-out that seals values before a write and opens them after a
 * read, joined like every other operation of the request. */
#include "orm/crypt.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

#include "backend/kms/kms.h"
#include "obs/log.h"
#include "orm/envelope.h"
#include "orm/key.h"
#include "value/codec_ddb.h"

bool tt_orm_crypt_model(const struct tt_model *m) {
  for (size_t i = 0; i < m->n_attrs; i++)
    if (m->attrs[i].encrypted)
      return true;
  return false;
}

int tt_orm_crypt_check(const struct tt_orm *orm, const struct tt_model *m, struct tt_error *err) {
  if (orm->kms != NULL || !tt_orm_crypt_model(m))
    return 0;
  return tt_error_set(err, TT_ERR_ENCRYPTION_NOT_CONFIGURED, NULL,
                      "model %s has encrypted attributes and no KMS key is configured "
                      "(--kms-key-id); its items are neither written nor read",
                      m->name);
}

/* EncryptedFieldNotQueryable when REST path `path` starts in an encrypted
 * attribute: when `inside`, only when it goes further into it (a select or
 * update path); else always (a key, condition or filter operand). */
static int refuse_path(const struct tt_model *m, const char *path, const char *field, bool inside,
                       struct tt_error *err) {
  const char *name;
  size_t n;
  bool nested = path[tt_expr_rest_path_head(path, &name, &n)] != '\0';
  const struct tt_model_attr *a = tt_model_attr_find(m, name, n);
  if (a == NULL || !a->encrypted || (inside && !nested))
    return 0;
  return tt_error_set(err, TT_ERR_ENCRYPTED_FIELD_NOT_QUERYABLE, field,
                      inside ? "attribute %s is encrypted: it is only read or written whole"
                             : "attribute %s is encrypted: it cannot be used in a key, condition "
                               "or filter",
                      a->name);
}

int tt_orm_crypt_check_path(const struct tt_model *m, const char *path, const char *field,
                            struct tt_error *err) {
  return refuse_path(m, path, field, true, err);
}

int tt_orm_crypt_check_select(const struct tt_model *m, const struct tt_select *s,
                              const char *field, struct tt_error *err) {
  size_t i = 0;
  while (s != NULL && i < s->n && tt_orm_crypt_check_path(m, s->paths[i], field, err) == 0)
    i++;
  return s != NULL && i < s->n ? -1 : 0;
}

int tt_orm_crypt_check_condition(const struct tt_model *m, const struct tt_cond *c,
                                 const char *field, struct tt_error *err) {
  if (c == NULL)
    return 0;
  if (c->kind == TT_COND_CMP)
    return refuse_path(m, c->path, field, false, err);
  for (size_t i = 0; i < c->n_kids; i++)
    if (tt_orm_crypt_check_condition(m, &c->kids[i], field, err) != 0)
      return -1;
  return 0;
}

int tt_orm_crypt_check_key(const struct tt_model *m, const struct tt_key_cond *k,
                           struct tt_error *err) {
  for (size_t i = 0; k != NULL && i < k->n; i++)
    if (refuse_path(m, k->e[i].attr, "key", false, err) != 0)
      return -1;
  return 0;
}

/* ---- the KMS fan-out ------------------------------------------------------ */

struct slot {
  struct tt_client_call call; /* in the arena: the join may look at it after done */
  struct tt_orm_crypt *c;
  const struct tt_model_attr *attr;
  struct tt_av *value; /* replaced in place */
  const struct tt_model *model; /* of `item`; NULL for a value added alone */
  const struct tt_av *item;     /* the item holding `value`, to name it on failure */
  struct tt_envelope_parts parts; /* opening: parsed before any call */
  struct slot *next;
};

struct tt_orm_crypt {
  struct tt_orm_ctx *ctx;
  bool seal;
  struct slot *head, *tail, *next_to_start;
  size_t n, running;
  bool pumping, failed, finished;
  struct tt_error err;
  const struct slot *failed_slot; /* the value the first failure is about */
  tt_orm_crypt_done_cb done;
  void *arg;
};

struct tt_orm_crypt *tt_orm_crypt_new(struct tt_orm_ctx *ctx, bool seal) {
  struct tt_orm_crypt *c = tt_arena_alloc(ctx->arena, sizeof(*c));
  if (c != NULL) {
    c->ctx = ctx;
    c->seal = seal;
  }
  return c;
}

/* Adds one value of encrypted attribute `a` (borrowed until done ran). */
static int add_value(struct tt_orm_crypt *c, const struct tt_model_attr *a, struct tt_av *value,
                     struct tt_error *err) {
  struct slot *s = tt_arena_alloc(c->ctx->arena, sizeof(*s));
  if (s == NULL)
    return tt_orm_oom(err);
  s->c = c;
  s->attr = a;
  s->value = value;
  if (c->tail)
    c->tail->next = s;
  else
    c->head = s;
  c->tail = s;
  c->n++;
  return 0;
}

int tt_orm_crypt_add_update(struct tt_orm_crypt *c, const struct tt_model *m,
                            struct tt_orm_update *u, struct tt_error *err) {
  for (size_t i = 0; i < u->n_actions; i++) {
    struct tt_orm_action *a = &u->actions[i];
    const struct tt_model_attr *at = tt_model_attr_find(m, a->path, strlen(a->path));
    if (at != NULL && at->encrypted && a->kind != TT_EXPR_UPD_REMOVE &&
        add_value(c, at, &a->value, err) != 0)
      return -1;
  }
  return 0;
}

int tt_orm_crypt_add_item_of(struct tt_orm_crypt *c, const struct tt_model *m, struct tt_av *item,
                             struct tt_error *err) {
  if (item->type != TT_AV_M)
    return 0;
  for (size_t i = 0; i < item->len; i++) {
    struct tt_av_member *mb = &item->u.members[i];
    const struct tt_model_attr *a = tt_model_attr_find(m, mb->name, mb->name_len);
    if (a != NULL && a->encrypted) {
      if (add_value(c, a, &mb->value, err) != 0)
        return -1;
      c->tail->model = m;
      c->tail->item = item;
    }
  }
  return 0;
}

static void fail_at(struct tt_orm_crypt *c, const struct slot *s, const struct tt_error *e) {
  if (!c->failed) {
    c->err = *e;
    c->failed_slot = s;
  }
  c->failed = true;
}

/* The first TT_ORM_KEY_SHA256_HEX hex digits of SHA-256 over the item's key
 * (model m's partition and sort attributes) written as DynamoDB JSON,
 * compact, names in byte order, e.g. {"PK":{"S":"USER#1"},"SK":{"S":"P"}}:
 * what Python's json.dumps(key, sort_keys=True, separators=(",", ":"),
 * ensure_ascii=False) writes. Returns 0, or -1 (a key attribute missing,
 * memory). */
static int key_sha256(const struct tt_model *m, const struct tt_av *item,
                      char out[TT_ORM_KEY_SHA256_HEX + 1]) {
  struct tt_av key;
  struct tt_buf text;
  struct tt_error e;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  int rc = -1;
  if (tt_orm_key_of_item(m, item, NULL, &key, &e) != 0)
    return -1;
  tt_buf_init(&text, 0);
  if (tt_ddb_item_write(&text, &key, 0) != 0 ||
      EVP_Digest(text.data, text.len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
      mdlen * 2 < TT_ORM_KEY_SHA256_HEX)
    goto done;
  for (size_t i = 0; i < TT_ORM_KEY_SHA256_HEX / 2; i++)
    snprintf(out + 2 * i, 3, "%02x", md[i]);
  rc = 0;
done:
  if (text.data)
    OPENSSL_cleanse(text.data, text.len); /* it held key values */
  tt_buf_free(&text);
  tt_av_free(&key);
  return rc;
}

/* An envelope of a stored item failed to open: the error, the request's
 * details and a log line name the item by its key attribute names and the
 * SHA-256 prefix of its key (docs/errors.md), never by the key's values. */
static void name_item(struct tt_orm_crypt *c) {
  const struct slot *s = c->failed_slot;
  char hash[TT_ORM_KEY_SHA256_HEX + 1];
  if (c->seal || s == NULL || s->item == NULL ||
      c->err.code != TT_ERR_INVALID_ENCRYPTED_ENVELOPE ||
      key_sha256(s->model, s->item, hash) != 0)
    return;
  const struct tt_model *m = s->model;
  struct tt_orm_result *r = c->ctx->result;
  if (r != NULL && r->status == 0 && r->details == NULL) {
    json_t *names = json_array(), *d = json_object();
    if (names == NULL || d == NULL || json_array_append_new(names, json_string(m->pk->name)) ||
        (m->sk && json_array_append_new(names, json_string(m->sk->name))) ||
        json_object_set_new(d, "model", json_string(m->name)) ||
        json_object_set_new(d, "key_sha256", json_string(hash)) ||
        json_object_set(d, "key_attributes", names)) {
      json_decref(d); /* best effort: no details when out of memory */
      d = NULL;
    }
    json_decref(names);
    r->details = d;
  }
  size_t len = strlen(c->err.message);
  snprintf(c->err.message + len, sizeof(c->err.message) - len, " (item with key sha256 %s)",
           hash);
  struct tt_log_line l;
  tt_log_begin(&l, TT_LOG_WARN, "crypt.envelope_invalid");
  tt_log_str(&l, "request_id", c->ctx->request_id);
  tt_log_str(&l, "model", m->name);
  tt_log_str(&l, "attribute", s->attr->name);
  tt_log_str(&l, "key_attributes", m->pk->name);
  if (m->sk)
    tt_log_str(&l, "sort_key_attribute", m->sk->name);
  tt_log_str(&l, "key_sha256", hash);
  tt_log_end(&l);
}

/* A KMS failure in the API's terms. The key's own problems (missing,
 * disabled, not ours) are configuration: EncryptionNotConfigured. */
static void kms_failed(struct tt_orm_crypt *c, const struct slot *s,
                       const struct tt_backend_error *e) {
  const char *s_attr = s->attr->name;
  struct tt_error err;
  const char *op = c->seal ? "GenerateDataKey" : "Decrypt";
  const char *t = e->type;
  if (strcmp(t, "RequestCanceled") == 0)
    tt_error_set(&err, TT_ERR_BACKEND_TIMEOUT, NULL,
                 "the KMS call was canceled at the request deadline");
  else if (strcmp(t, "CredentialsRefused") == 0) /* as result.c: the provider's message */
    tt_error_set(&err, TT_ERR_FORBIDDEN, NULL, "%s", e->message);
  else if (strcmp(t, "CredentialsUnavailable") == 0)
    tt_error_set(&err, TT_ERR_BACKEND_UNAVAILABLE, NULL, "%s", e->message);
  else if (e->throttling)
    tt_error_set(&err, TT_ERR_THROTTLED, NULL, "KMS %s is still throttled after retries (%s)",
                 op, t);
  else if (e->retryable)
    tt_error_set(&err, TT_ERR_BACKEND_UNAVAILABLE, NULL, "KMS %s failed (%s); retry", op, t);
  else if (strcmp(t, "InvalidCiphertextException") == 0 ||
           strcmp(t, "IncorrectKeyException") == 0)
    tt_error_set(&err, TT_ERR_INVALID_ENCRYPTED_ENVELOPE, s_attr,
                 "KMS cannot decrypt the data key of a stored envelope (%s)", t);
  else
    tt_error_set(&err, TT_ERR_ENCRYPTION_NOT_CONFIGURED, NULL,
                 "KMS refused %s with the configured key (%s); check --kms-key-id and its "
                 "permissions",
                 op, t);
  fail_at(c, s, &err);
}

/* Seals or opens one value with the data key of its KMS answer. */
static void use_key(struct slot *s, json_t *resp) {
  struct tt_orm_crypt *c = s->c;
  unsigned char key[TT_KMS_DATA_KEY_BYTES], nonce[TT_ENVELOPE_NONCE_BYTES];
  struct tt_buf edk;
  struct tt_av out;
  struct tt_error err;
  tt_buf_init(&edk, 0);
  if (tt_kms_data_key(resp, key, c->seal ? &edk : NULL, &err) != 0) {
    fail_at(c, NULL, &err);
    goto done;
  }
  int rc;
  if (c->seal) {
    if (RAND_bytes(nonce, sizeof(nonce)) != 1) {
      tt_error_set(&err, TT_ERR_INTERNAL, NULL, "no random bytes for a nonce");
      rc = -1;
    } else {
      rc = tt_envelope_seal(s->value, s->attr->name, s->attr->name_len, key, nonce, edk.data,
                            edk.len, &out, &err);
    }
  } else {
    rc = tt_envelope_open(&s->parts, s->attr->name, s->attr->name_len, key, &out, &err);
  }
  OPENSSL_cleanse(key, sizeof(key));
  if (rc != 0) {
    fail_at(c, s, &err);
    goto done;
  }
  tt_av_free(s->value);
  *s->value = out;
done:
  tt_buf_free(&edk);
}

static void pump(struct tt_orm_crypt *c);

static void slot_done_cb(struct tt_client_call *call) {
  struct slot *s = call->arg;
  struct tt_orm_crypt *c = s->c;
  if (call->bc.status != 0)
    kms_failed(c, s, &call->bc.error);
  else if (!c->failed)
    use_key(s, call->bc.response);
  c->running--;
  pump(c);
}

static void finish(struct tt_orm_crypt *c) {
  c->finished = true;
  if (c->failed)
    name_item(c);
  c->done(c->arg, c->failed ? &c->err : NULL);
}

/* Starts calls up to the bound; finishes when it settled (nothing runs and
 * nothing is left to start, or one failed). Re-entrant calls only count
 * down: the outer loop goes on. */
static void pump(struct tt_orm_crypt *c) {
  if (c->pumping || c->finished)
    return;
  c->pumping = true;
  struct tt_orm *orm = c->ctx->orm;
  while (!c->failed && c->next_to_start != NULL && c->running < TT_ORM_CRYPT_PARALLEL) {
    struct slot *s = c->next_to_start;
    c->next_to_start = s->next;
    json_t *req = c->seal ? tt_kms_generate_data_key_request(orm->kms_key_id)
                          : tt_kms_decrypt_request(orm->kms_key_id, s->parts.edk,
                                                   s->parts.edk_len);
    s->call.model = c->ctx->model ? c->ctx->model->name : NULL;
    s->call.request_id = c->ctx->request_id;
    c->running++;
    if (tt_client_start(orm->kms, c->ctx->join, &s->call, c->seal ? TT_KMS_GENERATE_DATA_KEY
                                                                  : TT_KMS_DECRYPT,
                        req, slot_done_cb, s) != 0) {
      c->running--;
      kms_failed(c, s, &s->call.bc.error);
    }
  }
  c->pumping = false;
  if (c->running == 0 && (c->failed || c->next_to_start == NULL))
    finish(c);
}

void tt_orm_crypt_run_then(struct tt_orm_crypt *c, tt_orm_crypt_done_cb done, void *arg) {
  c->done = done;
  c->arg = arg;
  if (!c->seal) {
    /* Every envelope is checked before the first KMS call. */
    for (struct slot *s = c->head; s != NULL; s = s->next) {
      struct tt_error e;
      if (tt_envelope_parse(s->value, s->attr->name, &s->parts, &e) != 0) {
        fail_at(c, s, &e);
        finish(c);
        return;
      }
    }
  }
  c->next_to_start = c->head;
  if (c->ctx->orm->kms == NULL && c->n > 0) {
    struct tt_error e;
    tt_error_set(&e, TT_ERR_ENCRYPTION_NOT_CONFIGURED, c->head->attr->name,
                 "attribute %s is encrypted and no KMS key is configured (--kms-key-id)",
                 c->head->attr->name);
    fail_at(c, NULL, &e);
    finish(c);
    return;
  }
  pump(c);
}
