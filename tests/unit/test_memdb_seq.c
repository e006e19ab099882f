/* SPDX-License-Identifier: Apache-2.0 */
/* test_memdb_seq.c -- the memory backend's storage building blocks: the
 * slab (slab.c), sorted chunk sequences and their three shapes (seq.c), and
 * a table's attribute-name dictionary (names.c), DynamoDB's partition hash
 * (keyhash.c). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/memory/internal.h"

/* check's ck_assert_* record every assertion that passes (a write to the
 * runner's message file): over sequences of 100,000 entries that was nearly
 * all of this test's time. The loops below use HOT_ASSERT, which reports
 * failures only. */
#define HOT_ASSERT(c)                                                                              \
  do {                                                                                             \
    if (!(c))                                                                                      \
      ck_abort_msg("Assertion '%s' failed", #c);                                                   \
  } while (0)

/* ---- slab ---- */

START_TEST(slab_sizes_alignment_and_accounting) {
  struct memdb_slab *a = memdb_slab_new();
  ck_assert_ptr_nonnull(a);
  size_t sizes[] = {0, 1, 7, 8, 9, 24, 200, 1032, MEMDB_SLAB_MAX, MEMDB_SLAB_MAX + 1, 100000};
  size_t rounded[] = {8, 8, 8, 8, 16, 24, 200, 1032, MEMDB_SLAB_MAX, MEMDB_SLAB_MAX + 1, 100000};
  void *p[sizeof(sizes) / sizeof(sizes[0])];
  size_t live = 0;
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    p[i] = memdb_slab_alloc(a, sizes[i]);
    ck_assert_ptr_nonnull(p[i]);
    ck_assert_uint_eq((uintptr_t)p[i] % 8, 0);
    memset(p[i], 0xab, sizes[i]);
    live += rounded[i];
    ck_assert_uint_eq(memdb_slab_live(a), live);
  }
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
    memdb_slab_free(a, p[i], sizes[i]);
  ck_assert_uint_eq(memdb_slab_live(a), 0);
  memdb_slab_free(a, NULL, 10); /* nothing */
  memdb_slab_destroy(a);
  memdb_slab_destroy(NULL);
}
END_TEST

START_TEST(slab_reuses_slots_and_pages) {
  struct memdb_slab *a = memdb_slab_new();
  enum { N = 100000 }; /* 200-byte objects: about 300 pages of 64 KiB */
  void **p = calloc(N, sizeof(*p));
  for (size_t i = 0; i < N; i++) {
    ck_assert_ptr_nonnull(p[i] = memdb_slab_alloc(a, 200));
    memset(p[i], (int)(i & 0xff), 200);
  }
  for (size_t i = 0; i < N; i++) {
    unsigned char *c = p[i];
    ck_assert_int_eq(c[0], (int)(i & 0xff));
    ck_assert_int_eq(c[199], (int)(i & 0xff));
  }
  /* A freed slot is the next one handed out in its class. */
  void *q = p[N / 2];
  memdb_slab_free(a, q, 200);
  ck_assert_ptr_eq(memdb_slab_alloc(a, 200), q);
  /* Free everything but one object; pages emptied go back and are reused
   * by another class. */
  for (size_t i = 1; i < N; i++)
    memdb_slab_free(a, p[i], 200);
  ck_assert_uint_eq(memdb_slab_live(a), 200);
  for (size_t i = 1; i < N; i++)
    ck_assert_ptr_nonnull(p[i] = memdb_slab_alloc(a, 96));
  for (size_t i = 1; i < N; i++)
    memdb_slab_free(a, p[i], 96);
  memdb_slab_free(a, p[0], 200);
  ck_assert_uint_eq(memdb_slab_live(a), 0);
  /* One object allocated and freed over and over keeps its page. */
  void *r = memdb_slab_alloc(a, 40);
  memdb_slab_free(a, r, 40);
  for (int i = 0; i < 1000; i++) {
    void *s = memdb_slab_alloc(a, 40);
    ck_assert_ptr_eq(s, r);
    memdb_slab_free(a, s, 40);
  }
  free(p);
  memdb_slab_destroy(a);
}
END_TEST

START_TEST(slab_resize_moves_contents) {
  struct memdb_slab *a = memdb_slab_new();
  char *p = memdb_slab_resize(a, NULL, 0, 16);
  memcpy(p, "0123456789abcde", 16);
  p = memdb_slab_resize(a, p, 16, 4000); /* into malloc's range */
  ck_assert_str_eq(p, "0123456789abcde");
  p = memdb_slab_resize(a, p, 4000, 24); /* and back */
  ck_assert_str_eq(p, "0123456789abcde");
  ck_assert_uint_eq(memdb_slab_live(a), 24);
  memdb_slab_free(a, p, 24);
  memdb_slab_destroy(a);
}
END_TEST

/* ---- sequences: entries are the integers 2k+1 (never NULL) ---- */

#define V(k) ((void *)(uintptr_t)(2 * (k) + 1))
#define K(e) (((uintptr_t)(e) - 1) / 2)

static bool before(const void *e, const void *ctx) { return K(e) < *(const uintptr_t *)ctx; }

/* Keyed sequences use the top 32 bits of a 64-bit value as its key (so
 * that many entries share a key and ties go to the predicate). */
static uint32_t key_of(const void *e) { return (uint32_t)(K(e) >> 32); }

static memdb_key_fn keyed; /* the key function of the test running (or NULL) */

static struct memdb_pos point(const struct memdb_seq *s, uintptr_t k) {
  struct memdb_pos p = memdb_seq_point(s, before, &k);
  if (keyed)
    HOT_ASSERT(memdb_pos_cmp(p, memdb_seq_point_key(s, (uint32_t)(k >> 32), before, &k)) == 0);
  return p;
}

static int insert(struct memdb_slab *a, struct memdb_seq *s, struct memdb_pos p, uintptr_t k) {
  return memdb_seq_insert(a, s, p, V(k), keyed);
}

/* The sequence holds exactly ref[0..n), in order, both ways. */
static void check_seq(const struct memdb_seq *s, const uintptr_t *ref, size_t n) {
  size_t i = 0;
  for (struct memdb_pos p = memdb_seq_begin(s); !memdb_seq_is_end(s, p); memdb_seq_next(s, &p)) {
    HOT_ASSERT(i < n);
    HOT_ASSERT(K(memdb_seq_at(s, p)) == ref[i]);
    i++;
  }
  ck_assert_uint_eq(i, n);
  struct memdb_pos p = memdb_seq_end(s);
  while (memdb_seq_prev(s, &p))
    HOT_ASSERT(K(memdb_seq_at(s, p)) == ref[--i]);
  ck_assert_uint_eq(i, 0);
  ck_assert_ptr_null(memdb_seq_at(s, memdb_seq_end(s)));
  for (uint32_t c = 0; keyed && s->capc && c < s->nc; c++) { /* keys and fences follow */
    const struct memdb_chunk *ch = s->u.c[c].c;
    const uint32_t *k = (const uint32_t *)(ch->e + ch->cap);
    ck_assert(ch->keyed);
    for (uint32_t j = 0; j < ch->n; j++)
      HOT_ASSERT(k[j] == key_of(ch->e[j]));
    ck_assert_uint_eq(s->u.c[c].last, k[ch->n - 1]);
  }
  if (n <= 1)
    ck_assert_uint_eq(s->capc, 0); /* empty or one entry: nothing allocated */
}

static size_t entries_in_chunks(const struct memdb_seq *s) {
  size_t n = 0;
  for (uint32_t c = 0; c < s->nc; c++)
    n += s->u.c[c].c->n;
  return n;
}

START_TEST(seq_shapes_one_entry_in_place) {
  keyed = _i ? key_of : NULL; /* run 1: keyed, as a store's partitions */
  struct memdb_slab *a = memdb_slab_new();
  struct memdb_seq s = {0};
  uintptr_t ref[2] = {5, 7};
  check_seq(&s, ref, 0);
  ck_assert(memdb_seq_is_end(&s, point(&s, 3)));
  ck_assert_int_eq(insert(a, &s, point(&s, 5), 5), 0);
  check_seq(&s, ref, 1);
  ck_assert_uint_eq(memdb_slab_live(a), 0);
  ck_assert_uint_eq(point(&s, 5).c, 0);
  ck_assert(memdb_seq_is_end(&s, point(&s, 6)));
  *memdb_seq_slot(&s, point(&s, 5)) = V(5); /* in-place replacement */
  ck_assert_int_eq(insert(a, &s, point(&s, 7), 7), 0);
  check_seq(&s, ref, 2);
  ck_assert_uint_gt(s.capc, 0);
  memdb_seq_remove(a, &s, point(&s, 5));
  check_seq(&s, ref + 1, 1);
  ck_assert_uint_eq(memdb_slab_live(a), 0); /* folded back */
  memdb_seq_remove(a, &s, point(&s, 7));
  check_seq(&s, ref, 0);
  memdb_seq_free(a, &s);
  memdb_slab_destroy(a);
}
END_TEST

START_TEST(seq_sequential_loads_fill_chunks) {
  keyed = _i ? key_of : NULL; /* run 1: keyed, as a store's partitions */
  struct memdb_slab *a = memdb_slab_new();
  enum { N = 100000 };
  uintptr_t *ref = malloc(N * sizeof(*ref));
  struct memdb_seq up = {0}, down = {0};
  for (uintptr_t k = 0; k < N; k++) {
    ref[k] = k;
    HOT_ASSERT(insert(a, &up, memdb_seq_end(&up), k) == 0);
    HOT_ASSERT(insert(a, &down, memdb_seq_begin(&down), N - 1 - k) == 0);
  }
  check_seq(&up, ref, N);
  check_seq(&down, ref, N);
  /* Every chunk but the newest is full. */
  ck_assert_uint_eq(up.nc, (N + MEMDB_CHUNK_MAX - 1) / MEMDB_CHUNK_MAX);
  ck_assert_uint_eq(down.nc, (N + MEMDB_CHUNK_MAX - 1) / MEMDB_CHUNK_MAX);
  memdb_seq_free(a, &up);
  memdb_seq_free(a, &down);
  ck_assert_uint_eq(memdb_slab_live(a), 0);
  free(ref);
  memdb_slab_destroy(a);
}
END_TEST

START_TEST(seq_random_inserts_and_removals_match_a_sorted_array) {
  keyed = _i ? key_of : NULL; /* run 1: keyed, as a store's partitions */
  struct memdb_slab *a = memdb_slab_new();
  enum { N = 60000 };
  uintptr_t *ref = malloc(N * sizeof(*ref));
  size_t n = 0;
  struct memdb_seq s = {0};
  srand(7);
  for (int round = 0; round < 3; round++) {
    while (n < N) {
      uintptr_t k = ((uintptr_t)rand() << 16) ^ (uintptr_t)rand();
      struct memdb_pos p = point(&s, k);
      if (!memdb_seq_is_end(&s, p) && K(memdb_seq_at(&s, p)) == k)
        continue;
      HOT_ASSERT(insert(a, &s, p, k) == 0);
      size_t lo = 0, hi = n;
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ref[mid] < k)
          lo = mid + 1;
        else
          hi = mid;
      }
      memmove(ref + lo + 1, ref + lo, (n - lo) * sizeof(*ref));
      ref[lo] = k;
      n++;
    }
    check_seq(&s, ref, n);
    ck_assert_uint_eq(entries_in_chunks(&s), n);
    if (round == 0 && !keyed)
      fprintf(stderr, "memdb_seq: %zu random inserts fill %u chunks (%.0f %% full)\n", n, s.nc,
              100.0 * (double)n / ((double)s.nc * MEMDB_CHUNK_MAX));
    /* Spilling into neighbours keeps chunks at least 3/4 full on average
     * (halving splits alone give about 0.7). */
    ck_assert_uint_le(s.nc, n * 4 / 3 / MEMDB_CHUNK_MAX + 1);
    /* Remove all but a few, in random order. */
    while (n > (round == 2 ? 0 : 3)) {
      size_t i = (size_t)rand() % n;
      struct memdb_pos p = point(&s, ref[i]);
      HOT_ASSERT(K(memdb_seq_at(&s, p)) == ref[i]);
      memdb_seq_remove(a, &s, p);
      memmove(ref + i, ref + i + 1, (n - i - 1) * sizeof(*ref));
      n--;
      if (n % 997 == 0)
        check_seq(&s, ref, n);
    }
    check_seq(&s, ref, n);
  }
  memdb_seq_free(a, &s);
  ck_assert_uint_eq(memdb_slab_live(a), 0);
  free(ref);
  memdb_slab_destroy(a);
}
END_TEST

/* ---- names ---- */

START_TEST(names_ids_are_stable_and_bounded) {
  struct memdb_names d = {0};
  ck_assert_int_eq(memdb_names_id(&d, "createdAt", 9), 0);
  ck_assert_int_eq(memdb_names_id(&d, "PK", 2), 1);
  ck_assert_int_eq(memdb_names_id(&d, "createdAt", 9), 0);
  ck_assert_int_eq(memdb_names_id(&d, "", 0), 2);
  ck_assert_int_eq(memdb_names_id(&d, "P", 1), 3); /* a prefix is another name */
  size_t len;
  ck_assert_str_eq(memdb_names_get(&d, 1, &len), "PK");
  ck_assert_uint_eq(len, 2);
  char longname[200];
  memset(longname, 'x', sizeof(longname));
  ck_assert_int_eq(memdb_names_id(&d, longname, sizeof(longname)), -1);
  /* Room for 4096 names; later ones are spelled out by the caller. */
  char name[32];
  int64_t last = -1;
  for (int i = 0; i < 5000; i++) {
    snprintf(name, sizeof(name), "attr%d", i);
    int64_t id = memdb_names_id(&d, name, strlen(name));
    if (i < 4092)
      ck_assert_int_eq(id, i + 4);
    else
      ck_assert_int_eq(id, -1);
    if (id >= 0)
      last = id;
  }
  ck_assert_int_eq(last, 4095);
  ck_assert_str_eq(memdb_names_get(&d, 4095, &len), "attr4091");
  ck_assert_int_eq(memdb_names_id(&d, "attr17", 6), 21); /* still found */
  memdb_names_free(&d);
  ck_assert_uint_eq(d.n, 0);
}
END_TEST

/* ---- keyhash ---- */

static uint32_t kh(enum tt_av_type type, const char *p, size_t len) {
  struct memdb_kv k = {type, p, len};
  return memdb_hash(&k);
}

START_TEST(keyhash_is_dynamodb_partition_hash) {
  /* First 32 bits of MD5("Outliers" + bytes), as DynamoDB orders a Scan. */
  ck_assert_uint_eq(kh(TT_AV_S, "2", 1), 0x29cbed30u);
  ck_assert_uint_eq(kh(TT_AV_S, "hello", 5), 0x8f051e55u);
  ck_assert_uint_eq(kh(TT_AV_S, "\xc3\xa4\xc3\xa1\xc3\xb6\xc3\xbc", 8), 0xafc23a43u);
  ck_assert_uint_eq(kh(TT_AV_B, "\x00\x01\x02\xff", 4), 0xa1231954u);
  char big[100];
  memset(big, 'x', sizeof(big)); /* two MD5 blocks */
  ck_assert_uint_eq(kh(TT_AV_S, big, sizeof(big)), 0x6f0d4a13u);
  /* Numbers in DynamoDB's base-100 form. */
  static const struct {
    const char *n, *bytes;
    size_t nbytes;
    uint32_t hash;
  } nums[] = {
      {"0", "\x80", 1, 0xce212d75u},
      {"7", "\xc1\x08", 2, 0x0275cc14u},
      {"-999.9", "\x3d\x5c\x02\x0b\x66", 5, 0x68b143a8u},
      {"0.012345", "\xc0\x02\x18\x2e", 4, 0xcf6f3ae9u},
      {"999.9", "\xc2\x0a\x64\x5b", 4, 0x0c9cee4bu},
      {"-0.09", "\x3f\x5c\x66", 3, 0x8c55317bu},
      {"-1", "\x3e\x64\x66", 3, 0x0267df4cu},
      {"12345678901234567890123456789012345678",
       "\xd3\x0d\x23\x39\x4f\x5b\x0d\x23\x39\x4f\x5b\x0d\x23\x39\x4f\x5b\x0d\x23\x39\x4f", 20,
       0xb50a4cbdu},
  };
  for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
    struct memdb_kv k = {TT_AV_N, nums[i].n, strlen(nums[i].n)};
    unsigned char buf[MEMDB_NUM_BYTES_MAX];
    const unsigned char *bytes;
    size_t n = memdb_key_bytes(&k, buf, &bytes);
    ck_assert_uint_eq(n, nums[i].nbytes);
    ck_assert_mem_eq(bytes, nums[i].bytes, n);
    ck_assert_uint_eq(memdb_hash(&k), nums[i].hash);
  }
  /* A table key's hash covers both key values. */
  struct memdb_kv a = {TT_AV_S, "a", 1}, n5 = {TT_AV_N, "5", 1}, x = {TT_AV_S, "x", 1};
  ck_assert_uint_eq(memdb_hash2(&a, &a), 0x2a0bba27u);
  ck_assert_uint_eq(memdb_hash2(&x, &n5), 0x3e7bc665u);
  ck_assert_uint_eq(memdb_hash2(&a, NULL), memdb_hash(&a));
}
END_TEST

int main(void) {
  Suite *s = suite_create("memdb_seq");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, slab_sizes_alignment_and_accounting);
  tcase_add_test(tc, slab_reuses_slots_and_pages);
  tcase_add_test(tc, slab_resize_moves_contents);
  tcase_add_loop_test(tc, seq_shapes_one_entry_in_place, 0, 2);
  tcase_add_loop_test(tc, seq_sequential_loads_fill_chunks, 0, 2);
  tcase_add_loop_test(tc, seq_random_inserts_and_removals_match_a_sorted_array, 0, 2);
  tcase_add_test(tc, names_ids_are_stable_and_bounded);
  tcase_add_test(tc, keyhash_is_dynamodb_partition_hash);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
