/* SPDX-License-Identifier: Apache-2.0 */
/* tokens.c -- the client-token memo of transactions: a hash table of
 * tokens in first-use order, forgotten after DynamoDB's 10 minutes. */
#include "orm/tokens.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/hash.h"
#include "value/json_exact.h"

struct token_entry {
  struct token_entry *hnext; /* bucket chain */
  struct token_entry *qnext; /* first-use order, oldest first */
  uint64_t body_hash;
  int64_t at_ns;
  char token[37]; /* ClientRequestToken is 1 to 36 characters */
};

/* Owned by struct tt_orm (orm->tokens), created on first use. Entries are
 * queued in insertion order, which is first-use order: expiry pops from
 * the head, so forgetting costs O(1) per token. */
struct tt_orm_tokens {
  struct token_entry **buckets;
  size_t nbuckets; /* a power of two */
  size_t n;
  struct token_entry *head, *tail;
};

int tt_orm_tokens_hash(const json_t *body, uint64_t *out) {
  struct tt_buf canon;
  tt_buf_init(&canon, 0);
  if (tt_json_dump(body, TT_JSON_SORT_KEYS, &canon) != 0) {
    tt_buf_free(&canon);
    return -1;
  }
  *out = tt_fnv1a(canon.data, canon.len);
  tt_buf_free(&canon);
  return 0;
}

static size_t bucket_of(const struct tt_orm_tokens *t, const char *token) {
  return (size_t)tt_fnv1a(token, strlen(token)) & (t->nbuckets - 1);
}

static struct token_entry *find(const struct tt_orm_tokens *t, const char *token) {
  if (t == NULL || t->n == 0)
    return NULL;
  for (struct token_entry *e = t->buckets[bucket_of(t, token)]; e; e = e->hnext)
    if (strcmp(e->token, token) == 0)
      return e;
  return NULL;
}

/* Forgets the tokens first used a window or more before `now`. A clock
 * that steps back keeps them longer, never shorter. */
static void expire(struct tt_orm_tokens *t, int64_t now) {
  while (t && t->head && now - t->head->at_ns >= TT_ORM_TOKENS_WINDOW_NS) {
    struct token_entry *e = t->head;
    struct token_entry **pp = &t->buckets[bucket_of(t, e->token)];
    while (*pp != e)
      pp = &(*pp)->hnext;
    *pp = e->hnext;
    t->head = e->qnext;
    if (t->head == NULL)
      t->tail = NULL;
    t->n--;
    free(e);
  }
}

/* Doubles the bucket array once the table is as full as it is wide, so
 * chains stay short. Returns 0 or -1 (the table is unchanged). */
static int grow(struct tt_orm_tokens *t) {
  size_t nb = t->nbuckets ? t->nbuckets * 2 : 64;
  struct token_entry **b = calloc(nb, sizeof(*b));
  if (b == NULL)
    return -1;
  for (size_t i = 0; i < t->nbuckets; i++) {
    struct token_entry *e = t->buckets[i];
    while (e) {
      struct token_entry *next = e->hnext;
      size_t k = (size_t)tt_fnv1a(e->token, strlen(e->token)) & (nb - 1);
      e->hnext = b[k];
      b[k] = e;
      e = next;
    }
  }
  free(t->buckets);
  t->buckets = b;
  t->nbuckets = nb;
  return 0;
}

int64_t tt_orm_tokens_time(struct tt_orm *orm, const char *token, uint64_t body_hash,
                           int64_t now) {
  expire(orm->tokens, now);
  const struct token_entry *e = find(orm->tokens, token);
  return e && e->body_hash == body_hash ? e->at_ns : now;
}

int tt_orm_tokens_remember(struct tt_orm *orm, const char *token, uint64_t body_hash,
                           int64_t at_ns, int64_t now, uint32_t *retry_after_s,
                           struct tt_error *err) {
  size_t len = strlen(token);
  if (len == 0 || len >= sizeof(((struct token_entry *)0)->token))
    return tt_error_set(err, TT_ERR_VALIDATION, "client_token",
                        "client_token must be a string of 1 to 36 characters");
  if (orm->tokens == NULL && (orm->tokens = calloc(1, sizeof(*orm->tokens))) == NULL)
    return tt_orm_oom(err);
  struct tt_orm_tokens *t = orm->tokens;
  expire(t, now);
  if (find(t, token) != NULL)
    return 0; /* the first use stays the one the backend compares with */
  size_t limit = orm->token_limit ? orm->token_limit : TT_ORM_TOKENS_DEFAULT_LIMIT;
  if (t->n >= limit) {
    int64_t wait_ns = t->head->at_ns + TT_ORM_TOKENS_WINDOW_NS - now;
    int64_t s = (wait_ns + 999999999) / 1000000000;
    *retry_after_s = s < 1 ? 1 : s > 600 ? 600 : (uint32_t)s;
    return tt_error_set(err, TT_ERR_THROTTLED, "client_token",
                        "the daemon already remembers %zu client tokens of the last 10 minutes, "
                        "its limit; retry after %u s, or send the transaction without "
                        "client_token",
                        limit, (unsigned)*retry_after_s);
  }
  if (t->n >= t->nbuckets && grow(t) != 0)
    return tt_orm_oom(err);
  struct token_entry *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return tt_orm_oom(err);
  memcpy(e->token, token, len + 1);
  e->body_hash = body_hash;
  e->at_ns = at_ns;
  size_t k = bucket_of(t, token);
  e->hnext = t->buckets[k];
  t->buckets[k] = e;
  if (t->tail)
    t->tail->qnext = e;
  else
    t->head = e;
  t->tail = e;
  t->n++;
  return 0;
}

size_t tt_orm_tokens_count(const struct tt_orm *orm) {
  return orm->tokens ? orm->tokens->n : 0;
}

void tt_orm_cleanup(struct tt_orm *orm) {
  struct tt_orm_tokens *t = orm->tokens;
  if (t == NULL)
    return;
  struct token_entry *e = t->head;
  while (e) {
    struct token_entry *next = e->qnext;
    free(e);
    e = next;
  }
  free(t->buckets);
  free(t);
  orm->tokens = NULL;
}
