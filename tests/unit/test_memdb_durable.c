/* SPDX-License-Identifier: Apache-2.0 */
/* test_memdb_durable.c -- the memory backend's data dir: record codec,
 * restart equals live state (tables, indexes, TTL, items), snapshots, torn
 * tail dropped, corruption refused with file and offset, the lock, group
 * commit, answers after the fsync (always) or the write (everysec, no),
 * the mapped log of everysec (cut on close, its zero tail after a crash),
 * I/O errors failing the write with nothing applied and recovery
 * afterwards, snapshots whose fork or child fails, the bytes of an item's
 * record, and a snapshot's items written from their stored encoding. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_memdb.h"

#include "backend/memory/internal.h"
#include "backend/memory/wal.h"
#include "value/codec_ddb.h"

static char dir[256];

struct hooks {
  int fsyncs;
  int fail_write; /* errno to fail pwrite with, 0: none */
  int fail_fsync;
  unsigned sleep_us;
};
static struct hooks hk;

static long h_pwrite(int fd, const void *p, size_t n, int64_t off, void *arg) {
  struct hooks *h = arg;
  if (h->fail_write) {
    /* a partial write first, as a full disk does */
    if (n > 4 && pwrite(fd, p, n / 2, (off_t)off) < 0)
      return -1;
    errno = h->fail_write;
    return -1;
  }
  return (long)pwrite(fd, p, n, (off_t)off);
}

static int h_fsync(int fd, void *arg) {
  struct hooks *h = arg;
  if (h->sleep_us)
    usleep(h->sleep_us);
  if (h->fail_fsync) {
    errno = h->fail_fsync;
    return -1;
  }
  __atomic_add_fetch(&h->fsyncs, 1, __ATOMIC_SEQ_CST);
  return fdatasync(fd);
}

static struct tt_memdb_options opts(void) {
  struct tt_memdb_options o = {0};
  o.data_dir = dir;
  o.pwrite_hook = h_pwrite;
  o.fsync_hook = h_fsync;
  o.hook_arg = &hk;
  return o;
}

static void rm_dir(void) {
  char cmd[300];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

static void setup(void) {
  memset(&hk, 0, sizeof(hk));
  snprintf(dir, sizeof(dir), "%s/ttd-durable-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) { rm_dir(); }

static void open_fx(struct fx *f, const struct tt_memdb_options *o) {
  memset(f, 0, sizeof(*f));
  ck_assert_int_eq(uv_loop_init(&f->loop), 0);
  char msg[512];
  int rc = tt_memdb_open(&f->loop, o, &f->b, msg, sizeof(msg));
  ck_assert_msg(rc == 0, "open: %s", msg);
}

static char *dump_of(struct fx *f, enum tt_ddb_op op, const char *req) {
  json_t *r = fx_ok(f, op, req);
  json_object_del(json_object_get(r, "Table"), "CreationDateTime");
  char *s = fx_dump(r);
  json_decref(r);
  return s;
}

#define SCAN_FULL "{'TableName':'full'}"
#define SCAN_TBL "{'TableName':'tbl'}"
#define TBL_ARN "{'ResourceArn':'arn:aws:dynamodb:ddblocal:000000000000:table/tbl'}"

/* What a restart must give back. */
static char *state(struct fx *f) {
  char *parts[7] = {dump_of(f, TT_DDB_SCAN, SCAN_FULL), dump_of(f, TT_DDB_SCAN, SCAN_TBL),
                    dump_of(f, TT_DDB_DESCRIBE_TABLE, SCAN_FULL),
                    dump_of(f, TT_DDB_DESCRIBE_TIME_TO_LIVE, SCAN_TBL),
                    dump_of(f, TT_DDB_SCAN, "{'TableName':'full','IndexName':'gsi2'}"),
                    dump_of(f, TT_DDB_DESCRIBE_TABLE, SCAN_TBL),
                    dump_of(f, TT_DDB_LIST_TAGS_OF_RESOURCE, TBL_ARN)};
  struct tt_buf b;
  tt_buf_init(&b, 0);
  for (int i = 0; i < 7; i++) {
    tt_buf_puts(&b, parts[i]);
    tt_buf_puts(&b, "\n");
    free(parts[i]);
  }
  return tt_buf_steal(&b, NULL);
}

static void workload(struct fx *f, int n) {
  fx_exec(f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_exec(f, TT_DDB_CREATE_TABLE, FULL_TABLE);
  fx_exec(f, TT_DDB_UPDATE_TIME_TO_LIVE,
          "{'TableName':'tbl','TimeToLiveSpecification':{'Enabled':true,'AttributeName':'exp'}}");
  for (int i = 0; i < n; i++) {
    char item[512];
    snprintf(item, sizeof(item),
             "{'pk':{'S':'p%d'},'sk':{'N':'%d'},'g':{'S':'g%d'},'l':{'S':'l'},'a':{'SS':['x','y']},"
             "'m':{'M':{'n':{'N':'1.5'},'b':{'B':'AAE='},'t':{'BOOL':true},'z':{'NULL':true},"
             "'l':{'L':[{'NS':['1','2']},{'BS':['AQ==']}]}}}}",
             i % 7, i, i % 3);
    fx_put(f, item);
    snprintf(item, sizeof(item), "{'pk':{'S':'k%d'},'v':{'N':'%d'},'exp':{'N':'1'}}", i, i);
    fx_put(f, item);
  }
  fx_exec(f, TT_DDB_UPDATE_ITEM,
          "{'TableName':'tbl','Key':{'pk':{'S':'k1'}},'UpdateExpression':'SET v = v + :o',"
          "'ExpressionAttributeValues':{':o':{'N':'10'}}}");
  fx_exec(f, TT_DDB_DELETE_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'k2'}}}");
  fx_exec(f, TT_DDB_TRANSACT_WRITE_ITEMS,
          "{'TransactItems':[{'Put':{'TableName':'tbl','Item':{'pk':{'S':'t1'}}}},"
          "{'Delete':{'TableName':'tbl','Key':{'pk':{'S':'k3'}}}}]}");
  fx_exec(f, TT_DDB_BATCH_WRITE_ITEM,
          "{'RequestItems':{'tbl':[{'PutRequest':{'Item':{'pk':{'S':'b1'}}}},"
          "{'DeleteRequest':{'Key':{'pk':{'S':'k4'}}}}]}}");
  /* tags, and a billing mode change */
  fx_exec(f, TT_DDB_TAG_RESOURCE,
          "{'ResourceArn':'arn:aws:dynamodb:us-east-1:1:table/tbl','Tags':[{'Key':'a',"
          "'Value':'1'},{'Key':'b','Value':'2'},{'Key':'c','Value':''}]}");
  fx_exec(f, TT_DDB_UNTAG_RESOURCE,
          "{'ResourceArn':'arn:aws:dynamodb:us-east-1:1:table/tbl','TagKeys':['b']}");
  fx_exec(f, TT_DDB_TAG_RESOURCE,
          "{'ResourceArn':'arn:aws:dynamodb:us-east-1:1:table/tbl','Tags':[{'Key':'a',"
          "'Value':'3'}]}");
  fx_exec(f, TT_DDB_UPDATE_TABLE,
          "{'TableName':'tbl','BillingMode':'PROVISIONED','ProvisionedThroughput':{"
          "'ReadCapacityUnits':3,'WriteCapacityUnits':4}}");
  /* an index added later is backfilled on replay too */
  fx_exec(f, TT_DDB_UPDATE_TABLE,
          "{'TableName':'full','AttributeDefinitions':[{'AttributeName':'l','AttributeType':'S'}],"
          "'GlobalSecondaryIndexUpdates':[{'Create':{'IndexName':'gsi2','KeySchema':"
          "[{'AttributeName':'l','KeyType':'HASH'}],'Projection':{'ProjectionType':'ALL'}}}]}");
}

/* CRC32C's check value, and the CPU's instruction against the table on
 * every length up to 300 at every alignment of an 8-byte word. */
START_TEST(test_crc32c) {
  ck_assert_uint_eq(memdb_crc32c("123456789", 9), 0xE3069283u);
  ck_assert_uint_eq(memdb_crc32c_table("123456789", 9), 0xE3069283u);
  ck_assert_uint_eq(memdb_crc32c("", 0), 0);
  unsigned char buf[320];
  for (size_t i = 0; i < sizeof(buf); i++)
    buf[i] = (unsigned char)(i * 131u + 7u);
  for (size_t off = 0; off < 8; off++)
    for (size_t n = 0; n <= 300; n++)
      ck_assert_uint_eq(memdb_crc32c(buf + off, n), memdb_crc32c_table(buf + off, n));
}
END_TEST

START_TEST(test_restart_equals_live) {
  struct tt_memdb_options o = opts();
  struct fx f;
  open_fx(&f, &o);
  workload(&f, 20);
  fx_exec(&f, TT_DDB_CREATE_TABLE,
          "{'TableName':'gone','BillingMode':'PAY_PER_REQUEST','AttributeDefinitions':"
          "[{'AttributeName':'pk','AttributeType':'S'}],'KeySchema':[{'AttributeName':'pk',"
          "'KeyType':'HASH'}]}");
  fx_exec(&f, TT_DDB_DELETE_TABLE, "{'TableName':'gone'}");
  char *live = state(&f);
  ck_assert_int_gt(hk.fsyncs, 0);
  fx_teardown(&f);
  open_fx(&f, &o);
  char *back = state(&f);
  ck_assert_str_eq(back, live);
  fx_fail(&f, TT_DDB_DESCRIBE_TABLE, "{'TableName':'gone'}", "ResourceNotFoundException",
          "Requested resource not found: Table: gone not found");
  f.err.http_status = 0;
  free(back);
  free(live);
  fx_teardown(&f);
}
END_TEST

static int forks; /* snapshot forks asked for by the tests' fork hooks */

/* A fork that fails: the snapshot is serialized on the loop. */
static int h_fork_fail(void *arg) {
  (void)arg;
  forks++;
  errno = ENOMEM;
  return -1;
}

/* A fork whose child cannot write its file (a full disk). */
static int h_fork_bad_child(void *arg) {
  struct hooks *h = arg;
  int pid = (int)fork();
  if (pid == 0)
    h->fail_write = ENOSPC;
  else if (pid > 0)
    forks++;
  return pid;
}

/* A fork after which the log's writes fail (in the daemon, not the child). */
static int h_fork_then_log_fails(void *arg) {
  struct hooks *h = arg;
  int pid = (int)fork();
  if (pid > 0) {
    forks++;
    h->fail_write = ENOSPC;
  }
  return pid;
}

/* Whether the data dir holds a snapshot file left unfinished (snapshot.tmp
 * or a child's snapshot.tmp.<pid>). */
static bool tmp_left(void) {
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  bool found = false;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    found = found || strncmp(de->d_name, "snapshot.tmp", 12) == 0;
  closedir(d);
  return found;
}

/* The size of file `name` of the data dir, -1 when it is absent. */
static long long dir_file_size(const char *name) {
  char p[320];
  snprintf(p, sizeof(p), "%s/%s", dir, name);
  struct stat sb;
  return stat(p, &sb) == 0 ? (long long)sb.st_size : -1;
}

static void snapshot_then_log_with(enum tt_memdb_fsync mode, int (*fork_hook)(void *)) {
  struct tt_memdb_options o = opts();
  o.fsync_mode = mode;
  o.snapshot_min_bytes = 4096; /* a snapshot every few records */
  o.fork_hook = fork_hook;
  forks = 0;
  struct fx f;
  open_fx(&f, &o);
  workload(&f, 60);
  fx_put(&f, "{'pk':{'S':'after'}}");
  char *live = state(&f);
  struct tt_memdb_wal_stats st;
  tt_memdb_wal_stats(f.b, &st);
  fx_teardown(&f);
  ck_assert(!tmp_left()); /* never left behind */
  long long snapshot = dir_file_size("snapshot");
  if (fork_hook == h_fork_bad_child) {
    ck_assert_int_gt(forks, 0);
    ck_assert_uint_eq(st.snapshots, 0);
    ck_assert_int_lt(snapshot, 0); /* the logs hold everything */
  } else {
    if (fork_hook)
      ck_assert_int_gt(forks, 0);
    ck_assert_uint_gt(st.snapshots, 0);
    ck_assert_int_ge(snapshot, 0);
    ck_assert_uint_eq(st.snapshot_bytes, (uint64_t)snapshot); /* the child's report */
  }
  open_fx(&f, &o);
  char *back = state(&f);
  ck_assert_str_eq(back, live);
  free(back);
  free(live);
  fx_teardown(&f);
}

static void snapshot_then_log(enum tt_memdb_fsync mode) { snapshot_then_log_with(mode, NULL); }

START_TEST(test_snapshot_then_log) { snapshot_then_log(TT_MEMDB_FSYNC_ALWAYS); }
END_TEST

/* The same with the records appended from the loop and answered at once. */
START_TEST(test_snapshot_then_log_everysec) { snapshot_then_log(TT_MEMDB_FSYNC_EVERYSEC); }
END_TEST

/* When fork fails the snapshot is serialized on the loop: the same files. */
START_TEST(test_snapshot_fork_fails) {
  snapshot_then_log_with(TT_MEMDB_FSYNC_EVERYSEC, h_fork_fail);
}
END_TEST

/* A child that fails leaves no file, and the logs keep every write. */
START_TEST(test_snapshot_child_fails) {
  snapshot_then_log_with(TT_MEMDB_FSYNC_EVERYSEC, h_fork_bad_child);
}
END_TEST

/* The records of the old generation fail while the child encodes a state
 * holding them: the snapshot is dropped (its child killed, its file
 * removed), so the data dir never holds the failed write. */
START_TEST(test_snapshot_dropped_when_its_records_fail) {
  struct tt_memdb_options o = opts();
  o.snapshot_min_bytes = 4096;
  o.fork_hook = h_fork_then_log_fails;
  forks = 0;
  struct fx f;
  open_fx(&f, &o);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  int i = 0;
  for (; forks == 0 && i < 1000; i++) {
    char item[160], req[200];
    snprintf(item, sizeof(item), "{'pk':{'S':'k%d'},'v':{'S':'%0100d'}}", i, i);
    snprintf(req, sizeof(req), "{'TableName':'tbl','Item':%s}", item);
    json_t *j = fx_json(req), *resp = NULL;
    int status = fx_run(&f, TT_DDB_PUT_ITEM, j, &resp);
    json_decref(j);
    json_decref(resp);
    if (forks == 0) {
      ck_assert_int_eq(status, 0);
    } else {
      ck_assert_int_eq(status, -1); /* the write the snapshot's batch held */
      ck_assert_str_eq(f.err.type, "DataDirUnavailable");
    }
    tt_backend_error_clear(&f.err);
  }
  ck_assert_int_eq(forks, 1);
  hk.fail_write = 0;
  struct tt_memdb_wal_stats st;
  tt_memdb_wal_stats(f.b, &st);
  ck_assert_uint_eq(st.snapshots, 0);
  char *live = dump_of(&f, TT_DDB_SCAN, SCAN_TBL);
  fx_teardown(&f);
  ck_assert_int_lt(dir_file_size("snapshot"), 0);
  ck_assert(!tmp_left());
  o.fork_hook = NULL;
  open_fx(&f, &o);
  char *back = dump_of(&f, TT_DDB_SCAN, SCAN_TBL);
  ck_assert_str_eq(back, live);
  char get[80];
  snprintf(get, sizeof(get), "{'TableName':'tbl','Key':{'pk':{'S':'k%d'}}}", i - 1);
  fx_expect(&f, TT_DDB_GET_ITEM, get, "{}"); /* the failed write is nowhere */
  free(back);
  free(live);
  fx_teardown(&f);
}
END_TEST

/* Snapshot files a crash left unfinished are removed at start, whatever
 * they hold; the state comes from the logs. */
START_TEST(test_unfinished_snapshot_files_removed) {
  struct tt_memdb_options o = opts();
  struct fx f;
  open_fx(&f, &o);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_put(&f, "{'pk':{'S':'a'}}");
  fx_teardown(&f);
  const char *names[] = {"snapshot.tmp", "snapshot.tmp.12345", "snapshot.tmp.1"};
  for (size_t i = 0; i < 3; i++) {
    char path[300];
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("not a snapshot", fp);
    fclose(fp);
  }
  ck_assert(tmp_left());
  open_fx(&f, &o);
  ck_assert(!tmp_left());
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'a'}}}",
            "{'Item':{'pk':{'S':'a'}}}");
  fx_teardown(&f);
}
END_TEST

START_TEST(test_compaction_at_start) {
  struct tt_memdb_options o = opts();
  struct fx f;
  open_fx(&f, &o);
  workload(&f, 40);
  char *live = state(&f);
  fx_teardown(&f);
  ck_assert_int_lt(dir_file_size("snapshot"), 0); /* under the bound: logs only */
  o.snapshot_min_bytes = 1024;                    /* the logs now pass it */
  open_fx(&f, &o);
  struct tt_memdb_wal_stats st;
  tt_memdb_wal_stats(f.b, &st);
  ck_assert_uint_eq(st.snapshots, 1);
  ck_assert_int_ge(dir_file_size("snapshot"), 0);
  ck_assert_int_lt(dir_file_size("log.0000000000000001"), 0); /* covered by the snapshot: deleted */
  char *back = state(&f);
  ck_assert_str_eq(back, live);
  free(back);
  fx_put(&f, "{'pk':{'S':'after'}}");
  fx_teardown(&f);
  open_fx(&f, &o);
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'after'}}}",
            "{'Item':{'pk':{'S':'after'}}}");
  fx_teardown(&f);
  free(live);
}
END_TEST

static char *log_path(char *out, size_t n) {
  snprintf(out, n, "%s/log.0000000000000001", dir);
  return out;
}

static off_t file_size(const char *p) {
  struct stat sb;
  ck_assert_int_eq(stat(p, &sb), 0);
  return sb.st_size;
}

START_TEST(test_torn_tail_dropped) {
  struct tt_memdb_options o = opts();
  struct fx f;
  open_fx(&f, &o);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_put(&f, "{'pk':{'S':'a'}}");
  fx_teardown(&f);
  char p[300];
  log_path(p, sizeof(p));
  off_t good = file_size(p);
  /* a transaction cut in the middle of its append */
  open_fx(&f, &o);
  fx_exec(&f, TT_DDB_TRANSACT_WRITE_ITEMS,
          "{'TransactItems':[{'Put':{'TableName':'tbl','Item':{'pk':{'S':'t1'}}}},"
          "{'Put':{'TableName':'tbl','Item':{'pk':{'S':'t2'}}}}]}");
  fx_teardown(&f);
  off_t full = file_size(p);
  ck_assert_int_eq(truncate(p, good + (full - good) / 2), 0);
  open_fx(&f, &o);
  ck_assert_int_eq(file_size(p), good);
  fx_expect(&f, TT_DDB_SCAN, SCAN_TBL,
            "{'Items':[{'pk':{'S':'a'}}],'Count':1,'ScannedCount':1}");
  fx_teardown(&f);
  /* a zeroed tail (a machine crash after the size grew) */
  int fd = open(p, O_WRONLY | O_APPEND);
  char z[64] = {0};
  ck_assert_int_eq(write(fd, z, sizeof(z)), (ssize_t)sizeof(z));
  close(fd);
  open_fx(&f, &o);
  ck_assert_int_eq(file_size(p), good);
  fx_teardown(&f);
}
END_TEST

/* A child that writes under everysec and dies without closing (a crash):
 * it reports the log's logical size before and after its last put. */
static void crash_child(const struct tt_memdb_options *o, bool create, const char *item,
                        int wfd) {
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    struct fx f;
    open_fx(&f, o);
    if (create)
      fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
    struct tt_memdb_wal_stats st;
    tt_memdb_wal_stats(f.b, &st);
    uint64_t sz[2] = {st.log_bytes, 0};
    fx_put(&f, item);
    tt_memdb_wal_stats(f.b, &st);
    sz[1] = st.log_bytes;
    char p[300];
    log_path(p, sizeof(p));
    struct stat sb;
    if (stat(p, &sb) != 0 || (uint64_t)sb.st_size <= sz[1])
      sz[1] = 0; /* no room allocated ahead: the parent fails */
    if (write(wfd, sz, sizeof(sz)) != (ssize_t)sizeof(sz))
      _exit(2);
    _exit(0);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* everysec without a pwrite hook: records go into a mapping of room
 * allocated ahead; a clean close cuts the file to its records, a crash
 * leaves a zero tail that the start-up load cuts, and a record whose copy
 * was cut short before the zeros is a torn tail. */
START_TEST(test_mapped_log_zero_tail) {
  struct tt_memdb_options o = opts();
  o.pwrite_hook = NULL;
  o.fsync_mode = TT_MEMDB_FSYNC_EVERYSEC;
  char p[300];
  log_path(p, sizeof(p));
  struct fx f;
  open_fx(&f, &o);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_put(&f, "{'pk':{'S':'a'}}");
  struct tt_memdb_wal_stats st;
  tt_memdb_wal_stats(f.b, &st);
  ck_assert_int_gt(file_size(p), (off_t)st.log_bytes); /* room allocated ahead */
  fx_teardown(&f);
  ck_assert_int_eq(file_size(p), (off_t)st.log_bytes); /* cut on close */
  int pfd[2];
  ck_assert_int_eq(pipe(pfd), 0);
  uint64_t sz[2];
  /* a crash after the put: the zero tail is cut, the put kept */
  crash_child(&o, false, "{'pk':{'S':'b'}}", pfd[1]);
  ck_assert_int_eq(read(pfd[0], sz, sizeof(sz)), (ssize_t)sizeof(sz));
  ck_assert_uint_gt(sz[1], sz[0]);
  ck_assert_int_gt(file_size(p), (off_t)sz[1]);
  open_fx(&f, &o);
  ck_assert_int_eq(file_size(p), (off_t)sz[1]);
  fx_expect(&f, TT_DDB_SCAN, SCAN_TBL,
            "{'Items':[{'pk':{'S':'b'}},{'pk':{'S':'a'}}],'Count':2,'ScannedCount':2}");
  fx_teardown(&f);
  /* a crash in the middle of a record's copy: its header whole, the end
   * of its payload still zero */
  crash_child(&o, false, "{'pk':{'S':'c'},'v':{'S':'a longer value to cut in two'}}", pfd[1]);
  ck_assert_int_eq(read(pfd[0], sz, sizeof(sz)), (ssize_t)sizeof(sz));
  ck_assert_uint_gt(sz[1], sz[0] + 16);
  int fd = open(p, O_WRONLY);
  ck_assert_int_ge(fd, 0);
  char z[256] = {0};
  size_t cut = (size_t)(sz[1] - sz[0]) / 2;
  ck_assert_uint_le(cut, sizeof(z));
  ck_assert_int_eq(pwrite(fd, z, cut, (off_t)(sz[1] - cut)), (ssize_t)cut);
  close(fd);
  open_fx(&f, &o);
  ck_assert_int_eq(file_size(p), (off_t)sz[0]);
  fx_expect(&f, TT_DDB_SCAN, SCAN_TBL,
            "{'Items':[{'pk':{'S':'b'}},{'pk':{'S':'a'}}],'Count':2,'ScannedCount':2}");
  fx_teardown(&f);
  /* past the first allocation (8 MiB): the room grows, the records stay */
  open_fx(&f, &o);
  size_t big = 300 * 1024;
  char *item = malloc(big + 64);
  ck_assert_ptr_nonnull(item);
  for (int i = 0; i < 40; i++) {
    int h = snprintf(item, 64, "{'pk':{'S':'big%d'},'v':{'S':'", i);
    memset(item + h, 'x', big);
    memcpy(item + h + big, "'}}", 4);
    fx_put(&f, item);
  }
  free(item);
  tt_memdb_wal_stats(f.b, &st);
  ck_assert_uint_gt(st.log_bytes, 8u * 1024 * 1024);
  ck_assert_int_gt(file_size(p), (off_t)st.log_bytes);
  fx_teardown(&f);
  ck_assert_int_eq(file_size(p), (off_t)st.log_bytes);
  open_fx(&f, &o);
  struct tt_memdb_wal_stats st2;
  tt_memdb_wal_stats(f.b, &st2);
  ck_assert_uint_eq(st2.records, 43); /* the table, a, b and the 40 big items */
  fx_expect(&f, TT_DDB_GET_ITEM,
            "{'TableName':'tbl','Key':{'pk':{'S':'big39'}},'ProjectionExpression':'pk'}",
            "{'Item':{'pk':{'S':'big39'}}}");
  fx_teardown(&f);
  close(pfd[0]);
  close(pfd[1]);
}
END_TEST

START_TEST(test_corruption_refused) {
  struct tt_memdb_options o = opts();
  struct fx f;
  open_fx(&f, &o);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_put(&f, "{'pk':{'S':'a'}}");
  fx_put(&f, "{'pk':{'S':'b'}}");
  fx_teardown(&f);
  char p[300];
  log_path(p, sizeof(p));
  /* flip a byte inside the second record (the first put) */
  unsigned char *data;
  FILE *fp = fopen(p, "r+b");
  ck_assert_ptr_nonnull(fp);
  unsigned char h[4];
  ck_assert_int_eq(fread(h, 1, 4, fp), 4);
  long second = 8 + (long)(h[0] | h[1] << 8 | h[2] << 16 | (unsigned)h[3] << 24);
  fseek(fp, second + 10, SEEK_SET);
  int c = fgetc(fp);
  fseek(fp, second + 10, SEEK_SET);
  fputc(c ^ 0x40, fp);
  fclose(fp);
  (void)data;
  uv_loop_t loop;
  uv_loop_init(&loop);
  struct tt_backend *b = NULL;
  char msg[512], want[64];
  ck_assert_int_eq(tt_memdb_open(&loop, &o, &b, msg, sizeof(msg)), UV_EIO);
  snprintf(want, sizeof(want), "at offset %ld of log.0000000000000001", second);
  ck_assert_msg(strstr(msg, want) != NULL, "%s", msg);
  ck_assert_ptr_nonnull(strstr(msg, "--data-dir-recover truncate"));
  ck_assert_int_eq(uv_loop_close(&loop), 0);
  /* the documented way out keeps what came before */
  o.recover_truncate = true;
  open_fx(&f, &o);
  ck_assert_int_eq(file_size(p), second);
  fx_expect(&f, TT_DDB_SCAN, SCAN_TBL, "{'Items':[],'Count':0,'ScannedCount':0}");
  fx_put(&f, "{'pk':{'S':'c'}}");
  fx_teardown(&f);
  o.recover_truncate = false;
  open_fx(&f, &o);
  fx_expect(&f, TT_DDB_SCAN, SCAN_TBL,
            "{'Items':[{'pk':{'S':'c'}}],'Count':1,'ScannedCount':1}");
  fx_teardown(&f);
}
END_TEST

START_TEST(test_lock_refuses_second) {
  struct tt_memdb_options o = opts();
  struct fx f;
  open_fx(&f, &o);
  uv_loop_t loop;
  uv_loop_init(&loop);
  struct tt_backend *b = NULL;
  char msg[512];
  ck_assert_int_eq(tt_memdb_open(&loop, &o, &b, msg, sizeof(msg)), UV_EBUSY);
  ck_assert_ptr_nonnull(strstr(msg, "in use by another process"));
  ck_assert_ptr_nonnull(strstr(msg, dir));
  ck_assert_int_eq(uv_loop_close(&loop), 0);
  fx_teardown(&f);
  open_fx(&f, &o); /* released by the close */
  fx_teardown(&f);
}
END_TEST

struct gc {
  int done, fsyncs_at_done_min;
};

static void gc_done(struct tt_backend_call *c) {
  struct gc *g = c->arg;
  ck_assert_int_eq(c->status, 0);
  int now = __atomic_load_n(&hk.fsyncs, __ATOMIC_SEQ_CST);
  if (g->fsyncs_at_done_min < 0 || now < g->fsyncs_at_done_min)
    g->fsyncs_at_done_min = now;
  g->done++;
  json_decref(c->response);
}

START_TEST(test_group_commit) {
  struct tt_memdb_options o = opts();
  struct fx f;
  open_fx(&f, &o);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  int before = hk.fsyncs;
  hk.sleep_us = 20000; /* a slow disk: writers pile up behind one fsync */
  enum { N = 64 };
  static struct tt_backend_call calls[N];
  static struct fx_typed typed[N];
  json_t *reqs[N];
  struct gc g = {0, -1};
  for (int i = 0; i < N; i++) {
    char t[128];
    snprintf(t, sizeof(t), "{'TableName':'tbl','Item':{'pk':{'S':'g%d'}}}", i);
    reqs[i] = fx_json(t);
    memset(&calls[i], 0, sizeof(calls[i]));
    calls[i].op = TT_DDB_PUT_ITEM;
    ck_assert(fx_typed_in(&calls[i], reqs[i], &typed[i]));
    calls[i].done = gc_done;
    calls[i].arg = &g;
    ck_assert_int_eq(f.b->ops->start(f.b, &calls[i]), 0);
  }
  /* answers wait for their record's fsync: none before the loop runs */
  ck_assert_int_eq(g.done, 0);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  ck_assert_int_eq(g.done, N);
  ck_assert_int_gt(g.fsyncs_at_done_min, before);
  int used = hk.fsyncs - before;
  ck_assert_msg(used >= 1 && used < N / 4, "%d fsyncs for %d writes", used, N);
  for (int i = 0; i < N; i++) {
    fx_typed_out(&calls[i], &typed[i]);
    json_decref(calls[i].response);
    json_decref(reqs[i]);
  }
  hk.sleep_us = 0;
  /* Fewer writers than the last sync saw: the sync waits for the others
   * a bounded time, then covers the lone write. */
  int lone = hk.fsyncs;
  fx_put(&f, "{'pk':{'S':'lone'}}");
  ck_assert_int_eq(hk.fsyncs, lone + 1);
  fx_teardown(&f);
}
END_TEST

START_TEST(test_everysec_answers_before_fsync) {
  struct tt_memdb_options o = opts();
  o.fsync_mode = TT_MEMDB_FSYNC_EVERYSEC;
  struct fx f;
  open_fx(&f, &o);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_put(&f, "{'pk':{'S':'a'}}");
  ck_assert_int_eq(hk.fsyncs, 0); /* written, not yet synced */
  fx_teardown(&f);                 /* the close syncs */
  ck_assert_int_gt(hk.fsyncs, 0);
  o.fsync_mode = TT_MEMDB_FSYNC_ALWAYS;
  open_fx(&f, &o);
  fx_expect(&f, TT_DDB_SCAN, SCAN_TBL,
            "{'Items':[{'pk':{'S':'a'}}],'Count':1,'ScannedCount':1}");
  fx_teardown(&f);
}
END_TEST

/* The size of the first log file, -1 when absent. */
static long long log_size(void) { return dir_file_size("log.0000000000000001"); }

struct at_answer {
  long long size;
  int fsyncs, done;
};

static void at_answer_done(struct tt_backend_call *c) {
  struct at_answer *a = c->arg;
  ck_assert_int_eq(c->status, 0);
  a->size = log_size();
  a->fsyncs = __atomic_load_n(&hk.fsyncs, __ATOMIC_SEQ_CST);
  a->done++;
  json_decref(c->response);
}

/* In every mode the record is in the file (the kernel has it) when the
 * answer is sent; under always an fdatasync has covered it too. */
START_TEST(test_record_written_before_answer) {
  static const enum tt_memdb_fsync modes[] = {TT_MEMDB_FSYNC_EVERYSEC, TT_MEMDB_FSYNC_ALWAYS,
                                              TT_MEMDB_FSYNC_NO};
  for (int i = 0; i < 3; i++) {
    struct tt_memdb_options o = opts();
    o.fsync_mode = modes[i];
    struct fx f;
    open_fx(&f, &o);
    if (i == 0)
      fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
    long long before = log_size();
    int fsyncs = __atomic_load_n(&hk.fsyncs, __ATOMIC_SEQ_CST);
    char t[128];
    snprintf(t, sizeof(t), "{'TableName':'tbl','Item':{'pk':{'S':'w%d'}}}", i);
    json_t *req = fx_json(t);
    struct tt_backend_call c;
    struct fx_typed typed;
    memset(&c, 0, sizeof(c));
    struct at_answer a = {0};
    c.op = TT_DDB_PUT_ITEM;
    ck_assert(fx_typed_in(&c, req, &typed));
    c.done = at_answer_done;
    c.arg = &a;
    ck_assert_int_eq(f.b->ops->start(f.b, &c), 0);
    uv_run(&f.loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(a.done, 1);
    ck_assert_int_gt(a.size, before);
    if (modes[i] == TT_MEMDB_FSYNC_ALWAYS)
      ck_assert_int_gt(a.fsyncs, fsyncs);
    else
      ck_assert_int_eq(a.fsyncs, fsyncs);
    fx_typed_out(&c, &typed);
    json_decref(c.response);
    json_decref(req);
    fx_teardown(&f);
  }
}
END_TEST

static void expect_unavailable(struct fx *f, enum tt_ddb_op op, const char *req) {
  json_t *j = fx_json(req), *resp = NULL;
  ck_assert_int_eq(fx_run(f, op, j, &resp), -1);
  json_decref(j);
  ck_assert_ptr_null(resp);
  ck_assert_str_eq(f->err.type, "DataDirUnavailable");
  ck_assert_uint_eq(f->err.http_status, 503);
  ck_assert(f->err.retryable);
  ck_assert_ptr_nonnull(strstr(f->err.message, dir));
  f->err.http_status = 0;
}

START_TEST(test_io_error_applies_nothing) {
  struct tt_memdb_options o = opts();
  struct fx f;
  open_fx(&f, &o);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  fx_put(&f, "{'pk':{'S':'a'},'v':{'N':'1'}}");
  hk.fail_write = ENOSPC;
  expect_unavailable(&f, TT_DDB_PUT_ITEM,
                     "{'TableName':'tbl','Item':{'pk':{'S':'a'},'v':{'N':'2'}}}");
  ck_assert_ptr_nonnull(strstr(f.err.message, "No space left on device"));
  expect_unavailable(&f, TT_DDB_TRANSACT_WRITE_ITEMS,
                     "{'TransactItems':[{'Put':{'TableName':'tbl','Item':{'pk':{'S':'t'}}}}]}");
  hk.fail_write = 0;
  hk.fail_fsync = EIO;
  expect_unavailable(&f, TT_DDB_DELETE_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'a'}}}");
  hk.fail_fsync = 0;
  /* nothing of the failed writes is visible */
  fx_expect(&f, TT_DDB_SCAN, SCAN_TBL,
            "{'Items':[{'pk':{'S':'a'},'v':{'N':'1'}}],'Count':1,'ScannedCount':1}");
  /* and the log works again once the disk does */
  fx_put(&f, "{'pk':{'S':'b'}}");
  fx_teardown(&f);
  open_fx(&f, &o);
  json_t *r = fx_ok(&f, TT_DDB_SCAN, SCAN_TBL);
  ck_assert_int_eq(json_integer_value(json_object_get(r, "Count")), 2);
  json_decref(r);
  fx_expect(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'a'}}}",
            "{'Item':{'pk':{'S':'a'},'v':{'N':'1'}}}");
  fx_teardown(&f);
}
END_TEST

START_TEST(test_codec_round_trip) {
  struct tt_buf b, framed;
  tt_buf_init(&b, 0);
  tt_buf_init(&framed, 0);
  json_t *ij = fx_json("{'pk':{'S':'x'},'n':{'N':'-1250'},'m':{'M':{'l':{'L':[{'NULL':true},"
                       "{'BOOL':false},{'SS':['a','b']}]}}},'bin':{'B':'AAEC'}}");
  struct tt_av item;
  struct tt_error err;
  ck_assert_int_eq(tt_ddb_item_from_json(ij, "item", &item, &err), 0);
  ck_assert_int_eq(memdb_wal_put_item(&b, true, "tbl", &item), 0);
  ck_assert_int_eq(memdb_wal_frame(&framed, b.data, b.len), 0);
  const unsigned char *p;
  size_t n;
  const unsigned char *d = (const unsigned char *)framed.data;
  ck_assert_int_eq(memdb_wal_next(d, framed.len, 0, &p, &n), MEMDB_WAL_OK);
  ck_assert_uint_eq(n, b.len);
  ck_assert_int_eq(memdb_wal_next(d, framed.len, framed.len, &p, &n), MEMDB_WAL_END);
  ck_assert_int_eq(memdb_wal_next(d, framed.len - 1, 0, &p, &n), MEMDB_WAL_SHORT);
  ck_assert_int_eq(memdb_wal_next(d, 5, 0, &p, &n), MEMDB_WAL_SHORT);
  framed.data[framed.len - 1] ^= 1;
  ck_assert_int_eq(memdb_wal_next(d, framed.len, 0, &p, &n), MEMDB_WAL_BAD);
  framed.data[framed.len - 1] ^= 1;
  /* replayed into a backend, the item reads back equal */
  struct fx f;
  fx_setup(&f, NULL);
  fx_exec(&f, TT_DDB_CREATE_TABLE, SIMPLE_TABLE);
  char msg[200];
  ck_assert_int_eq(memdb_wal_apply(f.b->impl, p, n, NULL, NULL, msg, sizeof(msg)), 0);
  json_t *r = fx_ok(&f, TT_DDB_GET_ITEM, "{'TableName':'tbl','Key':{'pk':{'S':'x'}}}");
  char *got = fx_dump(json_object_get(r, "Item")), *want = fx_dump(ij);
  ck_assert_str_eq(got, want);
  free(got);
  free(want);
  json_decref(r);
  /* a record of an unknown table is refused by name of the problem */
  tt_buf_reset(&b);
  ck_assert_int_eq(memdb_wal_put_item(&b, true, "nope", &item), 0);
  ck_assert_int_eq(memdb_wal_apply(f.b->impl, (unsigned char *)b.data, b.len, NULL, NULL, msg,
                                   sizeof(msg)),
                   -1);
  ck_assert_ptr_nonnull(strstr(msg, "does not exist"));
  /* every truncation of a payload is refused, never crashes */
  tt_buf_reset(&b);
  ck_assert_int_eq(memdb_wal_put_item(&b, true, "tbl", &item), 0);
  for (size_t cut = 1; cut < b.len; cut++)
    ck_assert_int_eq(memdb_wal_apply(f.b->impl, (unsigned char *)b.data, cut, NULL, NULL, msg,
                                     sizeof(msg)),
                     -1);
  fx_teardown(&f);
  tt_av_free(&item);
  json_decref(ij);
  tt_buf_free(&b);
  tt_buf_free(&framed);
}
END_TEST

/* Counts the items whose snapshot record (from the stored encoding) equals
 * the record of their decoded value. */
struct stored_check {
  struct tt_buf *b, *s;
  size_t items;
};

static int check_stored_item(const struct memdb_table *t, struct memdb_item *it, void *arg) {
  struct stored_check *sc = arg;
  struct tt_av v;
  ck_assert_int_eq(memdb_item_decode(t, it, &v, NULL), 0);
  tt_buf_reset(sc->b);
  tt_buf_reset(sc->s);
  ck_assert_int_eq(memdb_wal_put_item(sc->b, true, t->name, &v), 0);
  ck_assert_int_eq(memdb_wal_put_stored(sc->s, t, it), 0);
  ck_assert_uint_eq(sc->s->len, sc->b->len);
  ck_assert_int_eq(memcmp(sc->s->data, sc->b->data, sc->b->len), 0);
  tt_av_free(&v);
  sc->items++;
  return 0;
}

/* The bytes of an item's record (the form data dirs already hold), and the
 * same bytes written from the stored encoding of every item of the
 * workload's tables (a snapshot's items). */
START_TEST(test_item_record_bytes) {
  static const unsigned char want[] = {
      'P',  3,    't',  'b',  'l',  9,    5,    1,    'b',  4,    1,    1,    'l', 10,  2,
      2,    1,    '5',  9,    1,    1,    'q',  3,    1,    1,    2,    'p',  'k', 1,   1,
      'x',  2,    's',  's',  6,    2,    1,    'a',  1,    'b',  1,    'z',  5};
  json_t *ij = fx_json("{'pk':{'S':'x'},'b':{'BOOL':true},'z':{'NULL':true},'ss':{'SS':['a',"
                       "'b']},'l':{'L':[{'N':'5'},{'M':{'q':{'B':'AQ=='}}}]}}");
  struct tt_av item;
  struct tt_error err;
  ck_assert_int_eq(tt_ddb_item_from_json(ij, "item", &item, &err), 0);
  struct tt_buf b, s;
  tt_buf_init(&b, 0);
  tt_buf_init(&s, 0);
  ck_assert_int_eq(memdb_wal_put_item(&b, true, "tbl", &item), 0);
  ck_assert_uint_eq(b.len, sizeof(want));
  ck_assert_int_eq(memcmp(b.data, want, sizeof(want)), 0);
  tt_av_free(&item);
  json_decref(ij);

  struct fx f;
  fx_setup(&f, NULL);
  workload(&f, 20);
  fx_put(&f, "{'pk':{'S':'x'},'b':{'BOOL':true},'z':{'NULL':true},'ss':{'SS':['a','b']},"
             "'l':{'L':[{'N':'5'},{'M':{'q':{'B':'AQ=='}}}]},'nb':{'BS':['AQ==','Ag==']},"
             "'nn':{'NS':['1','-2.5']},'e':{'L':[]},'em':{'M':{}}}");
  struct stored_check sc = {&b, &s, 0};
  for (const struct memdb_table *t = ((struct memdb *)f.b->impl)->tables; t; t = t->next)
    ck_assert_int_eq(memdb_table_each(t, check_stored_item, &sc), 0);
  ck_assert_uint_ge(sc.items, 40);
  fx_teardown(&f);
  tt_buf_free(&b);
  tt_buf_free(&s);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("memdb_durable");
  TCase *tc = tcase_create("durable");
  tcase_set_timeout(tc, 60);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_codec_round_trip);
  tcase_add_test(tc, test_item_record_bytes);
  tcase_add_test(tc, test_crc32c);
  tcase_add_test(tc, test_restart_equals_live);
  tcase_add_test(tc, test_snapshot_then_log);
  tcase_add_test(tc, test_snapshot_then_log_everysec);
  tcase_add_test(tc, test_snapshot_fork_fails);
  tcase_add_test(tc, test_snapshot_child_fails);
  tcase_add_test(tc, test_snapshot_dropped_when_its_records_fail);
  tcase_add_test(tc, test_unfinished_snapshot_files_removed);
  tcase_add_test(tc, test_compaction_at_start);
  tcase_add_test(tc, test_torn_tail_dropped);
  tcase_add_test(tc, test_mapped_log_zero_tail);
  tcase_add_test(tc, test_corruption_refused);
  tcase_add_test(tc, test_lock_refuses_second);
  tcase_add_test(tc, test_group_commit);
  tcase_add_test(tc, test_everysec_answers_before_fsync);
  tcase_add_test(tc, test_record_written_before_answer);
  tcase_add_test(tc, test_io_error_applies_nothing);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return fx_run_suite(suite()); }
