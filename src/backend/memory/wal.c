/* SPDX-License-Identifier: Apache-2.0 */
/* wal.c -- the data dir of the memory backend: a lock, a write-ahead log of
 * whole operations, the answers released once their record is durable,
 * snapshots that bound the log, and the start-up load (torn tail dropped,
 * corruption refused).
 *
 * A record is appended from the loop as its call ends (the "direct" path):
 * under everysec and no it is copied into a shared mapping of the log, whose
 * room is allocated ahead in MAP_CHUNK steps and cut back to the records
 * when the mapping is dropped (the batch path, close), and the call is
 * answered then (the record is in the page cache); under always it is
 * written with one pwrite and held until an fdatasync on
 * libuv's thread pool covers it. One sync is in flight at a time and covers
 * every record written before it started (group commit); the records written
 * meanwhile wait for the next, started once the loop has handled what was
 * ready (a prepare handle) and, when fewer records wait than writers were
 * seen at the last sync, after a wait of at most a millisecond for the
 * others (a commit delay). Records around a snapshot's generation switch,
 * and after a failed write, take the "batch" path instead: appended and
 * synced on the thread pool, in order, while the direct path waits.
 *
 * A snapshot is taken at a generation switch by a forked child: it encodes
 * the tables from its copy-on-write view of the memory into
 * snapshot.tmp.<its pid> as it goes, syncs it and reports through a pipe
 * the loop polls; the daemon puts the file in place (rename, directory
 * sync, the logs it covers dropped) once the child reported and the
 * records of the old generation are written. The child holds no
 * descriptor but the data dir's and its pipe's (not the LOCK: a restart may
 * lock the dir while it lingers) and dies with the daemon. When fork fails
 * the tables are encoded on the loop and the file written on the thread
 * pool. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/memory/internal.h"
#include "backend/memory/wal.h"
#include "backend/table_json.h"
#include "obs/log.h"

#define SNAP_DEFAULT_MIN (64u * 1024u * 1024u)
#define SNAP_CHUNK (1024u * 1024u) /* payload bytes per snapshot record */
#define MAP_CHUNK (8u * 1024u * 1024u) /* everysec, no: the log grows by this much */

struct memdb_wal {
  struct memdb *m;
  char *dir;
  int dirfd, lockfd;
  enum tt_memdb_fsync mode;
  /* The log file: touched by the worker while `busy`, by the loop else. */
  int fd;
  uint64_t fd_gen;   /* generation of fd */
  uint64_t durable;  /* bytes of log fd_gen written (read by a sync job: atomic) */
  uint64_t synced;   /* of them, bytes known to be on disk */
  bool need_trunc;   /* a write failed: cut the file back to `durable` first */
  /* everysec, no: a shared mapping of fd's bytes [map_off, map_len), all
   * of them allocated on disk; the file is map_len long while it exists,
   * and `durable` long again once it is dropped. Only the part from the
   * page of `durable` on is mapped, so the pages of older records are not
   * kept mapped (nor counted in the RSS). */
  char *map;
  uint64_t map_off, map_len;
  uint64_t gen;      /* generation new records go to */
  /* Records waiting for the next batch, and their calls. */
  struct tt_buf pend;
  struct tt_backend_call *pend_head, *pend_tail;
  uint64_t pend_records;
  bool sync_wanted;  /* everysec: the timer asked for an fsync */
  bool unsynced;     /* bytes were written since the last fsync */
  /* always: calls whose record was written directly, waiting for a sync;
   * held_end[i] is where the record of the i-th one ends in log fd_gen. */
  struct tt_backend_call *held_head, *held_tail;
  uint64_t *held_end;
  size_t held_n, held_cap;
  uv_prepare_t prepare;
  bool prepare_open;
  /* always: the writers seen at the last sync's end (the calls it released
   * and those that had appended meanwhile), and whether the wait for them
   * is over. */
  size_t writers;
  bool wait_over;
  /* The batch in flight. */
  uv_work_t work;
  bool busy;
  struct tt_buf fly;
  struct tt_backend_call *fly_head;
  uint64_t fly_gen;
  bool fly_sync, fly_final;
  bool fly_sync_only; /* only an fdatasync: the loop may append meanwhile */
  uint64_t fly_cover; /* a sync job: the bytes it covers */
  int fly_err;
  const char *fly_what;
  /* The record of the running call: room for its header, then its payload
   * (framed in place on the direct path). */
  struct tt_buf rec;
  bool rec_bad;
  /* Snapshots. */
  uv_work_t snap_work;
  struct tt_buf snap;
  uint64_t snap_gen; /* > 0: a snapshot of the logs before it, waiting or in flight */
  bool snap_busy;
  int snap_err;
  uint64_t last_snap;
  uint64_t snap_min;
  uint64_t loaded_log_bytes; /* bytes of log replayed at start-up */
  double snap_ms;            /* time the last snapshot took on the loop (serialize or fork) */
  uint64_t snap_len;         /* bytes of the snapshot of snap_gen */
  /* A snapshot written by a forked child (snap_forked): the child's pid
   * while it runs, its report pipe, and whether the logs it covers are
   * written (snap_ready) and it reported (snap_child_done). */
  bool snap_forked, snap_ready, snap_child_done, snap_killed;
  int snap_pid;
  int snap_rfd;
  uv_poll_t *snap_poll;
  char snap_tmp[40]; /* the child's file: snapshot.tmp.<its pid> */
  unsigned char snap_report[24];
  size_t snap_report_n;
  double snap_child_ms;      /* the child's time to serialize and write */
  /* everysec: the sync every second; always: the wait for writers */
  uv_timer_t timer;
  bool timer_open;
  /* A failed reload: every call is refused until a restart. */
  bool broken;
  char broken_msg[256];
  bool closing, closed;
  struct tt_memdb_wal_stats st;
};

static void log_file_name(char *out, size_t n, uint64_t gen) {
  snprintf(out, n, "log.%016" PRIx64, gen);
}

static int do_fsync(struct memdb_wal *w, int fd) {
  __atomic_add_fetch(&w->st.fsyncs, 1, __ATOMIC_RELAXED); /* both workers */
  if (w->m->opts.fsync_hook)
    return w->m->opts.fsync_hook(fd, w->m->opts.hook_arg);
  return fdatasync(fd);
}

static int write_all(struct memdb_wal *w, int fd, const char *p, size_t n, uint64_t off) {
  while (n > 0) {
    long r = w->m->opts.pwrite_hook
                 ? w->m->opts.pwrite_hook(fd, p, n, (int64_t)off, w->m->opts.hook_arg)
                 : (long)pwrite(fd, p, n, (off_t)off);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      if (r == 0)
        errno = EIO;
      return -1;
    }
    p += r;
    n -= (size_t)r;
    off += (uint64_t)r;
  }
  return 0;
}

/* ---- the start-up load ---- */

static int read_file(int dirfd, const char *name, unsigned char **data, size_t *len) {
  *data = NULL;
  *len = 0;
  int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    close(fd);
    return -1;
  }
  size_t n = (size_t)sb.st_size, got = 0;
  unsigned char *p = malloc(n ? n : 1);
  if (p == NULL) {
    close(fd);
    errno = ENOMEM;
    return -1;
  }
  while (got < n) {
    ssize_t r = read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  close(fd);
  *data = p;
  *len = got;
  return 0;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The generations of the log files, sorted. */
static int list_logs(struct memdb_wal *w, uint64_t **gens, size_t *n) {
  *gens = NULL;
  *n = 0;
  DIR *d = opendir(w->dir);
  if (d == NULL)
    return -1;
  struct tt_buf b; /* of uint64_t */
  tt_buf_init(&b, 0);
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    const char *s = de->d_name;
    if (strncmp(s, "log.", 4) != 0 || strlen(s) != 20 || strspn(s + 4, "0123456789abcdef") != 16)
      continue;
    uint64_t gen = strtoull(s + 4, NULL, 16);
    if (tt_buf_append(&b, &gen, sizeof(gen)) != 0) {
      closedir(d);
      tt_buf_free(&b);
      errno = ENOMEM;
      return -1;
    }
  }
  closedir(d);
  *gens = (uint64_t *)(void *)tt_buf_steal(&b, n);
  *n /= sizeof(**gens);
  if (*n > 1)
    qsort(*gens, *n, sizeof(**gens), cmp_u64);
  return 0;
}

static void remove_log(struct memdb_wal *w, uint64_t gen) {
  char name[32];
  log_file_name(name, sizeof(name), gen);
  unlinkat(w->dirfd, name, 0);
}

/* Removes the logs a snapshot of generation `gen` covers: those before it. */
static void remove_logs_before(struct memdb_wal *w, uint64_t gen) {
  uint64_t *gens;
  size_t n;
  if (list_logs(w, &gens, &n) != 0)
    return;
  for (size_t i = 0; i < n; i++)
    if (gens[i] < gen)
      remove_log(w, gens[i]);
  free(gens);
}

/* Puts the snapshot file `tmp` in place (renamed to "snapshot", the
 * directory synced). Returns 0 or an errno. */
static int put_snapshot(struct memdb_wal *w, const char *tmp) {
  if (renameat(w->dirfd, tmp, w->dirfd, "snapshot") != 0 || fsync(w->dirfd) != 0)
    return errno;
  return 0;
}

/* A log line about the data dir with up to two more strings (a NULL value
 * is left out). */
static void log_dir(enum tt_log_level level, const char *event, const struct memdb_wal *w,
                    const char *k1, const char *v1, const char *k2, const char *v2) {
  struct tt_log_line l;
  tt_log_begin(&l, level, event);
  tt_log_str(&l, "data_dir", w->dir);
  tt_log_str(&l, k1, v1);
  tt_log_str(&l, k2, v2);
  tt_log_end(&l);
}

/* A snapshot that failed, or could not be taken: not fatal, the logs still
 * hold everything. */
static void snap_warn(const struct memdb_wal *w, const char *error) {
  log_dir(TT_LOG_WARN, "memdb.snapshot_failed", w, "error", error, NULL, NULL);
}

enum { LOAD_OK = 0, LOAD_FAIL = -1, LOAD_AGAIN = 1 };

/* Replays one log file. `last`: the newest file, whose torn tail is
 * dropped. `limit`: bytes to read at most (a reload reads the open log only
 * as far as it is durable). `fix`: truncate files (start-up, not reload). */
static int load_log(struct memdb_wal *w, uint64_t gen, bool last, uint64_t limit, bool fix,
                    uint64_t *size, char *msg, size_t msgsz) {
  char name[32], why[160];
  log_file_name(name, sizeof(name), gen);
  unsigned char *data;
  size_t len;
  if (read_file(w->dirfd, name, &data, &len) != 0) {
    snprintf(msg, msgsz, "the data dir %s: cannot read %s: %s", w->dir, name, strerror(errno));
    return LOAD_FAIL;
  }
  if (len > limit)
    len = (size_t)limit;
  size_t off = 0;
  int rc = LOAD_OK;
  /* Where the log is cut at `off` (when `fix`), the notice that says so. */
  const char *cut = NULL, *event = NULL, *note = NULL;
  for (;;) {
    const unsigned char *p;
    size_t n;
    enum memdb_wal_scan s = memdb_wal_next(data, len, off, &p, &n);
    if (s == MEMDB_WAL_END)
      break;
    if (s == MEMDB_WAL_OK) {
      if (memdb_wal_apply(w->m, p, n, NULL, NULL, why, sizeof(why)) == 0) {
        off += MEMDB_WAL_HEADER + n;
        w->st.records++;
        continue;
      }
    } else {
      bool zeros = true;
      for (size_t i = off; i < len && zeros; i++)
        zeros = data[i] == 0;
      if (zeros) {
        /* The room allocated ahead of the records (everysec, no), left by a
         * crash: the end of the log, not a record. */
        cut = "the zero tail of ";
        event = "memdb.log_zero_tail";
        note = "cut the unused room allocated at the end of the log (left by a crash)";
        break;
      }
      uint32_t rl = (uint32_t)data[off] | (uint32_t)data[off + 1] << 8 |
                    (uint32_t)data[off + 2] << 16 | (uint32_t)data[off + 3] << 24;
      /* Torn: cut short, or nothing but zeros after it (a record whose
       * copy into the allocated room was cut by a crash). */
      bool at_tail = s == MEMDB_WAL_SHORT;
      if (!at_tail && len - off >= MEMDB_WAL_HEADER && len - off - MEMDB_WAL_HEADER >= rl) {
        at_tail = true;
        for (size_t i = off + MEMDB_WAL_HEADER + rl; i < len && at_tail; i++)
          at_tail = data[i] == 0;
      }
      if (last && at_tail) {
        cut = "the torn tail of ";
        event = "memdb.log_torn_tail";
        note = "dropped an incomplete last record (a crash during its append)";
        break;
      }
      snprintf(why, sizeof(why), "%s",
               s == MEMDB_WAL_SHORT ? "a record cut short" : "a bad checksum");
    }
    /* Corruption. */
    if (!fix || !w->m->opts.recover_truncate) {
      snprintf(msg, msgsz,
               "data dir %s: %s at offset %zu of %s; not serving wrong data (to keep what is "
               "before it: --data-dir-recover truncate)",
               w->dir, why, off, name);
      free(data);
      return LOAD_FAIL;
    }
    cut = "";
    event = "memdb.log_recovered";
    note = "truncated the log at a corrupt record (--data-dir-recover truncate): the records "
           "from there on are lost";
    rc = LOAD_AGAIN;
    break;
  }
  if (event != NULL && fix) {
    /* The log cut at `off` and synced; the notice says why. */
    int fd = openat(w->dirfd, name, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)off) != 0 || fsync(fd) != 0) {
      snprintf(msg, msgsz, "the data dir %s: cannot truncate %s%s: %s", w->dir, cut, name,
               strerror(errno));
      if (fd >= 0)
        close(fd);
      free(data);
      return LOAD_FAIL;
    }
    close(fd);
    struct tt_log_line l;
    tt_log_begin(&l, TT_LOG_NOTICE, event);
    tt_log_str(&l, "data_dir", w->dir);
    tt_log_str(&l, "file", name);
    tt_log_int(&l, "offset", (int64_t)off);
    tt_log_str(&l, "message", note);
    tt_log_end(&l);
  }
  if (event != NULL)
    len = off;
  free(data);
  *size = len;
  return rc;
}

/* Rebuilds m's tables from the snapshot and the logs. `reload`: the backend
 * runs (an I/O error happened); the open log is read up to `durable` only
 * and nothing on disk changes. */
static int load(struct memdb_wal *w, bool reload, char *msg, size_t msgsz) {
  struct memdb *m = w->m;
  char why[160];
  unsigned char *data;
  size_t len;
  uint64_t snap_gen = 0;
  memdb_free_tables(m);
  w->st.records = 0;
  if (read_file(w->dirfd, "snapshot", &data, &len) == 0) {
    bool end = false;
    size_t off = 0;
    for (;;) {
      const unsigned char *p;
      size_t n;
      enum memdb_wal_scan s = memdb_wal_next(data, len, off, &p, &n);
      if (s == MEMDB_WAL_END && end)
        break;
      if (s != MEMDB_WAL_OK || end ||
          memdb_wal_apply(m, p, n, off == 0 ? &snap_gen : NULL, &end, why, sizeof(why)) != 0) {
        if (s == MEMDB_WAL_END)
          snprintf(why, sizeof(why), "no end record");
        else if (s != MEMDB_WAL_OK)
          snprintf(why, sizeof(why), "a bad checksum");
        snprintf(msg, msgsz,
                 "data dir %s: %s at offset %zu of snapshot; not serving wrong data (restore "
                 "the data dir from a backup)",
                 w->dir, why, off);
        free(data);
        return LOAD_FAIL;
      }
      off += MEMDB_WAL_HEADER + n;
    }
    free(data);
    if (!reload)
      w->last_snap = len;
  } else if (errno != ENOENT) {
    snprintf(msg, msgsz, "the data dir %s: cannot read snapshot: %s", w->dir, strerror(errno));
    return LOAD_FAIL;
  }
  uint64_t *gens;
  size_t ng;
  if (list_logs(w, &gens, &ng) != 0) {
    snprintf(msg, msgsz, "the data dir %s: cannot list it: %s", w->dir, strerror(errno));
    return LOAD_FAIL;
  }
  uint64_t cur = snap_gen ? snap_gen : 1, size = 0;
  bool any = false;
  for (size_t i = 0; i < ng; i++) {
    if (gens[i] < snap_gen) {
      if (!reload)
        remove_log(w, gens[i]); /* covered by the snapshot */
      continue;
    }
    bool last = i + 1 == ng;
    uint64_t limit = reload && gens[i] == w->fd_gen ? w->durable : UINT64_MAX;
    if (reload && gens[i] > w->fd_gen)
      break; /* not written yet */
    int rc = load_log(w, gens[i], last, limit, !reload, &size, msg, msgsz);
    if (rc == LOAD_AGAIN) {
      for (size_t k = i + 1; k < ng; k++)
        remove_log(w, gens[k]);
      free(gens);
      return LOAD_AGAIN;
    }
    if (rc != LOAD_OK) {
      free(gens);
      return LOAD_FAIL;
    }
    cur = gens[i];
    any = true;
    if (!reload)
      w->loaded_log_bytes += size;
    if (reload && gens[i] == w->fd_gen)
      break;
  }
  free(gens);
  if (!reload) {
    w->gen = w->fd_gen = cur;
    w->durable = any ? size : 0;
  }
  return LOAD_OK;
}

static void timer_cb(uv_timer_t *h);
static int compact_at_start(struct memdb_wal *w);

static uint64_t snap_bound(const struct memdb_wal *w) {
  return w->last_snap * 2 > w->snap_min ? w->last_snap * 2 : w->snap_min;
}

/* The file a snapshot's child writes: its own name, so that no child can
 * touch the file of another (a daemon started after its parent died). */
static void snap_tmp_name(char *out, size_t n, int pid) {
  snprintf(out, n, "snapshot.tmp.%d", pid);
}

int memdb_wal_open(struct memdb *m, char *msg, size_t msgsz) {
  const struct tt_memdb_options *o = &m->opts;
  struct memdb_wal *w = calloc(1, sizeof(*w));
  if (w == NULL || (w->dir = strdup(o->data_dir)) == NULL) {
    free(w);
    snprintf(msg, msgsz, "out of memory");
    return UV_ENOMEM;
  }
  w->m = m;
  w->mode = o->fsync_mode;
  w->snap_min = o->snapshot_min_bytes ? o->snapshot_min_bytes : SNAP_DEFAULT_MIN;
  w->fd = w->dirfd = w->lockfd = w->snap_rfd = -1;
  m->wal = w;
  if (mkdir(w->dir, 0755) != 0 && errno != EEXIST) {
    snprintf(msg, msgsz, "the data dir %s cannot be made: %s", w->dir, strerror(errno));
    return UV_EIO;
  }
  if ((w->dirfd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
    snprintf(msg, msgsz, "the data dir %s cannot be opened: %s", w->dir, strerror(errno));
    return UV_EIO;
  }
  if ((w->lockfd = openat(w->dirfd, "LOCK", O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0) {
    snprintf(msg, msgsz, "the data dir %s: cannot open its LOCK file: %s", w->dir,
             strerror(errno));
    return UV_EIO;
  }
  if (flock(w->lockfd, LOCK_EX | LOCK_NB) != 0) {
    snprintf(msg, msgsz, "data dir %s is in use by another process (its LOCK is held)",
             w->dir);
    return errno == EWOULDBLOCK ? UV_EBUSY : UV_EIO;
  }
  /* The snapshot files left unfinished by a crash: snapshot.tmp and the
   * children's snapshot.tmp.<pid>. */
  unlinkat(w->dirfd, "snapshot.tmp", 0);
  DIR *d = opendir(w->dir);
  for (struct dirent *de; d && (de = readdir(d)) != NULL;)
    if (strncmp(de->d_name, "snapshot.tmp.", 13) == 0)
      unlinkat(w->dirfd, de->d_name, 0);
  if (d)
    closedir(d);
  int rc;
  while ((rc = load(w, false, msg, msgsz)) == LOAD_AGAIN)
    ;
  if (rc != LOAD_OK)
    return UV_EIO;
  if (w->loaded_log_bytes >= snap_bound(w) && compact_at_start(w) != 0)
    snap_warn(w, strerror(errno));
  char name[32];
  log_file_name(name, sizeof(name), w->fd_gen);
  /* Anything past `durable` is a tail the load dropped or a failed append
   * (memdb_wal_free closes the file when this fails). */
  if ((w->fd = openat(w->dirfd, name, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0 ||
      ftruncate(w->fd, (off_t)w->durable) != 0 || fsync(w->dirfd) != 0) {
    snprintf(msg, msgsz, "the data dir %s: cannot open its log: %s", w->dir, strerror(errno));
    return UV_EIO;
  }
  /* The buffers are empty (w is zeroed); the header's room never fails after. */
  if (tt_buf_reserve(&w->rec, 4096) != 0) {
    snprintf(msg, msgsz, "out of memory");
    return UV_ENOMEM;
  }
  w->synced = w->durable;
  uv_prepare_init(m->base.loop, &w->prepare);
  w->prepare.data = w;
  w->prepare_open = true;
  if (w->mode != TT_MEMDB_FSYNC_NO) { /* everysec: the sync; always: the wait for writers */
    uv_timer_init(m->base.loop, &w->timer);
    w->timer.data = w;
    w->timer_open = true;
  }
  if (w->mode == TT_MEMDB_FSYNC_EVERYSEC) {
    uv_timer_start(&w->timer, timer_cb, 1000, 1000);
    uv_unref((uv_handle_t *)&w->timer);
  }
  w->st.log_bytes = w->durable;
  w->st.snapshot_bytes = w->last_snap;
  struct tt_log_line l;
  tt_log_begin(&l, TT_LOG_NOTICE, "memdb.data_dir_loaded");
  tt_log_str(&l, "data_dir", w->dir);
  tt_log_int(&l, "records", (int64_t)w->st.records);
  tt_log_int(&l, "log_bytes", (int64_t)w->durable);
  tt_log_int(&l, "snapshot_bytes", (int64_t)w->last_snap);
  tt_log_end(&l);
  return 0;
}

/* ---- records of the running call ---- */

static const unsigned char no_header[MEMDB_WAL_HEADER];

void memdb_wal_begin(struct memdb *m) {
  struct memdb_wal *w = m->wal;
  if (w == NULL)
    return;
  tt_buf_reset(&w->rec);
  w->rec_bad = tt_buf_append(&w->rec, no_header, sizeof(no_header)) != 0;
}

void memdb_wal_note_item(struct memdb *m, bool put, const char *table, const struct tt_av *v) {
  struct memdb_wal *w = m->wal;
  if (w && memdb_wal_put_item(&w->rec, put, table, v) != 0)
    w->rec_bad = true;
}

/* Appends the record of a table operation: its request as the table codec
 * writes it. 0, or -1 (memory). */
static int put_table(struct tt_buf *out, enum tt_ddb_op op, const struct tt_ddb_table_request *r,
                     double created) {
  json_t *j = tt_ddb_table_request_json(op, r);
  char *js = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  int rc = js == NULL                    ? -1
           : op == TT_DDB_CREATE_TABLE ? memdb_wal_put_create(out, created, js, strlen(js))
                                       : memdb_wal_put_request(out, op, js, strlen(js));
  free(js);
  return rc;
}

void memdb_wal_note_table(struct memdb *m, enum tt_ddb_op op,
                          const struct tt_ddb_table_request *r) {
  struct memdb_wal *w = m->wal;
  const struct memdb_table *t =
      w && op == TT_DDB_CREATE_TABLE ? memdb_table_get_any(m, r->table) : NULL;
  if (w && put_table(&w->rec, op, r, t ? t->created : 0) != 0)
    w->rec_bad = true;
}

bool memdb_wal_refuse(struct memdb *m, struct tt_backend_error *e) {
  struct memdb_wal *w = m->wal;
  if (w == NULL || !w->broken)
    return false;
  tt_backend_error_set(e, "DataDirUnavailable", 503, "%s", w->broken_msg);
  return true;
}

static void set_broken(struct memdb_wal *w, const char *why) {
  w->broken = true;
  snprintf(w->broken_msg, sizeof(w->broken_msg),
           "the data dir %s: %s; restart the daemon to load it again", w->dir, why);
  log_dir(TT_LOG_ERROR, "memdb.data_dir_broken", w, "message", why, NULL, NULL);
}

static void kick(struct memdb_wal *w);
static void prepare_cb(uv_prepare_t *h);
static void release(struct memdb_wal *w, struct tt_backend_call *c, bool fail, const char *msg);

/* Whether a record of n bytes may be appended from the loop now: nothing
 * waits before it, no generation switch or repair is due, and the thread
 * pool does at most an fdatasync of the same file meanwhile. */
static bool direct_ok(const struct memdb_wal *w, size_t n) {
  if (w->closing || w->closed || w->broken || w->need_trunc || w->fd < 0 || w->pend.len ||
      w->gen != w->fd_gen || (w->busy && !w->fly_sync_only))
    return false;
  return w->durable + n < snap_bound(w); /* else a snapshot is due: the batch path */
}

/* A write that did not reach the log: its failure message in msg, logged,
 * and the memory rebuilt from the log (cut back to what is durable). */
static void write_failed(struct memdb_wal *w, const char *what, int err, char *msg,
                         size_t msgsz) {
  snprintf(msg, msgsz,
           "the data dir %s: %s failed (%s); the write was not applied, retry once the "
           "disk has room or the error is fixed",
           w->dir, what, strerror(err));
  log_dir(TT_LOG_ERROR, "memdb.log_write_failed", w, "step", what, "error", strerror(err));
  char why[400];
  if (load(w, true, why, sizeof(why)) != LOAD_OK)
    set_broken(w, "the state could not be reloaded after a failed log write");
}

static void fail_call(struct tt_backend_call *c, const char *msg) {
  tt_backend_call_results_free(c);
  tt_backend_error_set(&c->error, "DataDirUnavailable", 503, "%s", msg);
  c->status = -1;
}

/* Room for one more held call. */
static int held_reserve(struct memdb_wal *w) {
  if (w->held_n < w->held_cap)
    return 0;
  size_t nc = w->held_cap ? w->held_cap * 2 : 64;
  uint64_t *e = realloc(w->held_end, nc * sizeof(*e));
  if (e == NULL)
    return -1;
  w->held_end = e;
  w->held_cap = nc;
  return 0;
}

/* The held calls whose record ends at or before `cover` (all: UINT64_MAX),
 * unlinked, oldest first. */
static struct tt_backend_call *held_take(struct memdb_wal *w, uint64_t cover) {
  size_t k = 0;
  struct tt_backend_call *head = w->held_head, *last = NULL;
  for (struct tt_backend_call *c = head; c && w->held_end[k] <= cover; c = c->next, k++)
    last = c;
  if (k == 0)
    return NULL;
  w->held_head = last->next;
  last->next = NULL;
  if (w->held_head == NULL)
    w->held_tail = NULL;
  w->held_n -= k;
  memmove(w->held_end, w->held_end + k, w->held_n * sizeof(*w->held_end));
  return head;
}

/* Drops the mapping and cuts the file back to its logical end, so that
 * nothing past `durable` is seen (by the batch path, a reader, a restart).
 * From the loop, while the thread pool does at most an fdatasync. */
static void map_drop(struct memdb_wal *w) {
  if (w->map == NULL)
    return;
  munmap(w->map, (size_t)(w->map_len - w->map_off));
  w->map = NULL;
  w->map_off = w->map_len = 0;
  if (w->fd >= 0 && ftruncate(w->fd, (off_t)w->durable) != 0)
    w->need_trunc = true; /* the batch path cuts it before its next append */
}

/* everysec, no: whether the mapping holds room for n more bytes, grown by
 * MAP_CHUNK steps when not. The room is allocated on disk first
 * (posix_fallocate), so a write into it never faults (no SIGBUS) and a full
 * disk shows here; -1 then, with no mapping: the record takes pwrite, which
 * reports the error as before. */
static int map_room(struct memdb_wal *w, size_t n) {
  uint64_t need = w->durable + n;
  if (need <= w->map_len)
    return 0;
  if (w->mode == TT_MEMDB_FSYNC_ALWAYS || w->m->opts.pwrite_hook)
    return -1;
  uint64_t len = (need + MAP_CHUNK - 1) / MAP_CHUNK * MAP_CHUNK;
  uint64_t from = w->map ? w->map_len : w->durable;
  uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), off = w->durable / page * page;
  void *p = MAP_FAILED;
  if (posix_fallocate(w->fd, (off_t)from, (off_t)(len - from)) == 0) {
    if (w->map)
      munmap(w->map, (size_t)(w->map_len - w->map_off));
    w->map = NULL;
    p = mmap(NULL, (size_t)(len - off), PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, (off_t)off);
  }
  if (p == MAP_FAILED) {
    map_drop(w);
    w->map_off = w->map_len = 0;
    if (ftruncate(w->fd, (off_t)w->durable) != 0) /* a partial allocation */
      w->need_trunc = true;
    return -1;
  }
  w->map = p;
  w->map_off = off;
  w->map_len = len;
  return 0;
}

/* The direct path: the record appended now, from the loop. Returns whether
 * the call is held (always); false with c failed when the append failed. */
static bool append_direct(struct memdb_wal *w, struct tt_backend_call *c) {
  bool always = w->mode == TT_MEMDB_FSYNC_ALWAYS;
  size_t n = w->rec.len;
  int rc = memdb_wal_seal((unsigned char *)w->rec.data, n - MEMDB_WAL_HEADER);
  if (rc != 0 || (always && held_reserve(w) != 0)) {
    tt_buf_reset(&w->rec);
    set_broken(w, "out of memory while logging a write");
    fail_call(c, w->broken_msg);
    return false;
  }
  if (!always && map_room(w, n) == 0) {
    /* In the page cache once copied: a crash of the process loses none of
     * it, the sync of everysec puts it on disk (an fdatasync of fd writes
     * the mapping's dirty pages too). */
    uint64_t h; /* the header in one store, then the payload: a copy cut by a
                 * crash leaves a whole header and zeros after the payload */
    memcpy(&h, w->rec.data, sizeof(h));
    char *at = w->map + (w->durable - w->map_off);
    memcpy(at, &h, sizeof(h));
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    memcpy(at + MEMDB_WAL_HEADER, w->rec.data + MEMDB_WAL_HEADER, n - MEMDB_WAL_HEADER);
    rc = 0;
  } else {
    rc = write_all(w, w->fd, w->rec.data, n, w->durable);
  }
  tt_buf_reset(&w->rec);
  if (rc != 0) {
    int err = errno;
    char msg[400];
    /* The file may hold part of the record: cut it back (or before the
     * next append, on the batch path), and rebuild the memory from it. */
    if (ftruncate(w->fd, (off_t)w->durable) != 0)
      w->need_trunc = true;
    write_failed(w, "writing the log", err, msg, sizeof(msg));
    fail_call(c, msg);
    return false;
  }
  __atomic_store_n(&w->durable, w->durable + n, __ATOMIC_RELEASE);
  w->st.log_bytes = w->durable;
  w->st.records++;
  w->st.batches++;
  w->unsynced = true;
  if (!always)
    return false; /* in the kernel: answered now, synced by the timer or never */
  memdb_call_push(&w->held_head, &w->held_tail, c);
  w->held_end[w->held_n++] = w->durable;
  /* The sync starts once the loop has handled what is ready now, so the
   * records of this turn share it. */
  uv_prepare_start(&w->prepare, prepare_cb);
  return true;
}

bool memdb_wal_hold(struct memdb *m, struct tt_backend_call *c) {
  struct memdb_wal *w = m->wal;
  if (w == NULL || (w->rec.len <= MEMDB_WAL_HEADER && !w->rec_bad))
    return false;
  if (!w->rec_bad && direct_ok(w, w->rec.len))
    return append_direct(w, c);
  if (w->rec_bad || memdb_wal_frame(&w->pend, w->rec.data + MEMDB_WAL_HEADER,
                                    w->rec.len - MEMDB_WAL_HEADER) != 0) {
    /* The memory holds a change the log cannot: nothing is consistent. */
    tt_buf_reset(&w->rec);
    w->rec_bad = false;
    set_broken(w, "out of memory while logging a write");
    fail_call(c, w->broken_msg);
    return false;
  }
  tt_buf_reset(&w->rec);
  memdb_call_push(&w->pend_head, &w->pend_tail, c);
  w->pend_records++;
  kick(w);
  return true;
}

static void prepare_cb(uv_prepare_t *h) {
  struct memdb_wal *w = h->data;
  if (w->held_n == 0) {
    uv_prepare_stop(h);
    return;
  }
  kick(w);
}

/* ---- the log lane: one batch in flight at a time ---- */

static void work_cb(uv_work_t *req) {
  struct memdb_wal *w = req->data;
  const char *what = "syncing the log"; /* the step that failed */
  w->fly_err = 0;
  w->fly_what = NULL;
  if (w->fly_sync_only) {
    /* The loop may append meanwhile: what was written before this point is
     * covered, what comes later waits for the next sync. */
    w->fly_cover = __atomic_load_n(&w->durable, __ATOMIC_ACQUIRE);
    if (do_fsync(w, w->fd) != 0)
      goto fail;
    return;
  }
  if (w->need_trunc) {
    what = "truncating the log after a failed write";
    if (ftruncate(w->fd, (off_t)w->durable) != 0)
      goto fail;
    w->need_trunc = false;
  }
  if (w->fly_gen != w->fd_gen) {
    /* A new generation: the old file is complete and synced first. */
    char name[32];
    log_file_name(name, sizeof(name), w->fly_gen);
    what = "syncing the log";
    if (do_fsync(w, w->fd) != 0)
      goto fail;
    what = "starting a new log file";
    int fd = openat(w->dirfd, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || fsync(w->dirfd) != 0) {
      int err = errno;
      if (fd >= 0)
        close(fd);
      errno = err;
      goto fail;
    }
    close(w->fd);
    w->fd = fd;
    w->fd_gen = w->fly_gen;
    w->durable = w->synced = 0;
  }
  what = "writing the log";
  if (w->fly.len && write_all(w, w->fd, w->fly.data, w->fly.len, w->durable) != 0)
    goto fail;
  what = "syncing the log";
  if (w->fly_sync && do_fsync(w, w->fd) != 0)
    goto fail;
  if (w->fly_final) {
    close(w->fd);
    w->fd = -1;
  }
  return;
fail:
  w->fly_err = errno;
  w->fly_what = what;
}

static void release(struct memdb_wal *w, struct tt_backend_call *c, bool fail, const char *msg) {
  struct memdb *m = w->m;
  bool was = m->running;
  m->running = true;
  while (c) {
    struct tt_backend_call *next = c->next;
    c->next = NULL;
    if (fail)
      fail_call(c, msg);
    c->done(c);
    c = next;
  }
  m->running = was;
  memdb_arm(m);
}

static void snap_start(struct memdb_wal *w);
static void snap_drop(struct memdb_wal *w);
static void close_step(struct memdb_wal *w);

static void after_cb(uv_work_t *req, int status) {
  struct memdb_wal *w = req->data;
  w->busy = false;
  bool sync_only = w->fly_sync_only;
  struct tt_backend_call *calls = w->fly_head;
  w->fly_head = NULL;
  if (status != 0 && w->fly_err == 0) {
    w->fly_err = EIO;
    w->fly_what = "running the log work";
  }
  w->fly_sync_only = false;
  if (w->fly_err) {
    w->need_trunc = true;
    /* Every record not durable fails: those in flight, those written and
     * held for a sync (always), and those waiting (they may build on
     * them). The log is cut back to what is durable and the memory is
     * rebuilt from it. */
    if (w->mode == TT_MEMDB_FSYNC_ALWAYS)
      w->durable = w->synced;
    struct tt_backend_call *held = held_take(w, UINT64_MAX);
    struct tt_backend_call *waiting = w->pend_head;
    w->pend_head = w->pend_tail = NULL;
    tt_buf_reset(&w->pend);
    tt_buf_reset(&w->fly);
    w->pend_records = 0;
    if (w->fly_final) { /* the last batch: give up, the daemon is stopping */
      w->fly_final = false;
      w->closed = true;
    }
    if (w->snap_gen && !w->snap_busy)
      snap_drop(w); /* it held the failed records */
    char msg[400];
    write_failed(w, w->fly_what ? w->fly_what : "the log", w->fly_err, msg, sizeof(msg));
    release(w, calls, true, msg);
    release(w, held, true, msg);
    release(w, waiting, true, msg);
    if (w->closing)
      close_step(w);
    return;
  }
  if (sync_only) {
    /* Records appended since it started wait for the next. */
    w->synced = w->fly_cover;
    w->unsynced = w->durable != w->synced;
    size_t n = w->held_n;
    struct tt_backend_call *done = held_take(w, w->fly_cover);
    w->writers = n; /* those released now, and those appended since it started */
    release(w, done, false, NULL);
    kick(w);
    if (w->closing)
      close_step(w);
    return;
  }
  w->durable += w->fly.len;
  w->st.log_bytes = w->durable;
  w->st.batches++;
  if (w->fly.len)
    w->unsynced = true;
  struct tt_backend_call *held = NULL;
  if (w->fly_sync) {
    /* It synced every record written before it, the held ones too. */
    w->unsynced = false;
    w->synced = w->durable;
    held = held_take(w, UINT64_MAX);
  }
  tt_buf_reset(&w->fly);
  if (w->fly_final) {
    w->fly_final = false;
    w->closed = true;
  }
  release(w, held, false, NULL);
  release(w, calls, false, NULL);
  /* A snapshot waits until every record of the generations it covers is
   * on disk. */
  if (w->snap_gen && !w->snap_busy && w->fly_gen + 1 == w->snap_gen)
    snap_start(w);
  kick(w);
  if (w->closing)
    close_step(w);
}

static void maybe_snapshot(struct memdb_wal *w);

static void wait_cb(uv_timer_t *h) {
  struct memdb_wal *w = h->data;
  w->wait_over = true;
  kick(w);
}

/* Sends the batch to the thread pool. */
static void fly_queue(struct memdb_wal *w) {
  w->busy = true;
  w->work.data = w;
  if (uv_queue_work(w->m->base.loop, &w->work, work_cb, after_cb) != 0) {
    /* Cannot happen with a valid loop; fail the batch like an I/O error. */
    w->busy = false;
    w->fly_err = EIO;
    w->fly_what = "queueing the log work";
    after_cb(&w->work, UV_EIO);
  }
}

/* Sends the records waiting as the batch of generation gen (synced when
 * sync; sync_only: nothing waits, the loop may append meanwhile). */
static void fly_batch(struct memdb_wal *w, uint64_t gen, bool sync, bool sync_only) {
  struct tt_buf t = w->fly;
  w->fly = w->pend;
  w->pend = t;
  w->fly_head = w->pend_head;
  w->pend_head = w->pend_tail = NULL;
  w->fly_gen = gen;
  w->fly_sync_only = sync_only;
  w->fly_sync = sync;
  w->sync_wanted = false;
  if (w->snap_gen && w->snap_gen > w->gen)
    w->gen = w->snap_gen; /* later records go to the new generation */
  fly_queue(w);
}

static void kick(struct memdb_wal *w) {
  if (w->busy || w->closed)
    return;
  if (w->pend.len == 0 && (w->held_n || w->sync_wanted) && !w->need_trunc &&
      w->gen == w->fd_gen && w->fd >= 0) {
    if (w->mode == TT_MEMDB_FSYNC_ALWAYS && !w->sync_wanted && !w->closing &&
        !w->wait_over && w->held_n < w->writers) {
      /* Fewer records than writers at the last sync: the writers it
       * answered are likely sending their next write now. One sync for all
       * of them rather than one for those here and one for the rest (a
       * commit delay); a millisecond at most, for writers that stopped. */
      if (!uv_is_active((uv_handle_t *)&w->timer))
        uv_timer_start(&w->timer, wait_cb, 1, 0);
      return;
    }
    if (w->mode == TT_MEMDB_FSYNC_ALWAYS)
      uv_timer_stop(&w->timer);
    w->wait_over = false;
    /* Only a sync: the direct path goes on appending meanwhile. */
    fly_batch(w, w->fd_gen, true, true);
    return;
  }
  if (w->pend.len == 0 && !w->sync_wanted && w->held_n == 0)
    return;
  map_drop(w); /* the batch path writes with pwrite, to a file of `durable` bytes */
  maybe_snapshot(w);
  w->st.records += w->pend_records;
  w->pend_records = 0;
  fly_batch(w, w->gen, w->mode == TT_MEMDB_FSYNC_ALWAYS || w->sync_wanted, false);
}

static void timer_cb(uv_timer_t *h) {
  struct memdb_wal *w = h->data;
  if (w->unsynced || w->busy) {
    w->sync_wanted = true;
    kick(w);
  }
}

/* ---- snapshots ---- */

/* The records that make a table like t (without its items): its
 * CreateTable, and its TTL and tags when it has them. */
static int put_table_of(struct memdb *m, struct tt_buf *out, const struct memdb_table *t) {
  struct tt_ddb_index *ixs = calloc(t->nidx + 1, sizeof(*ixs));
  if (ixs == NULL)
    return -1;
  /* An UPDATING table's change was logged before: it is written done. */
  bool updating = t->status == MEMDB_UPDATING;
  struct tt_ddb_table_request r = {
      .table = t->name, .defs = t->defs, .n_defs = t->ndefs, .keys = {t->pk.name, t->sk.name},
      .indexes = ixs, .n_indexes = t->nidx,
      .billing = memdb_billing(t),
      .throughput = {.set = !t->pay_per_request,
                     .read = updating ? t->pending_rcu : t->rcu,
                     .write = updating ? t->pending_wcu : t->wcu}};
  for (size_t i = 0; i < t->nidx; i++) {
    const struct memdb_index *ix = &t->idx[i];
    ixs[i] = (struct tt_ddb_index){
        .name = ix->name, .global = ix->global, .keys = {ix->pk.name, ix->sk.name},
        .projection = ix->proj, .include = (const char *const *)ix->include,
        .n_include = ix->proj == TT_DDB_PROJECT_INCLUDE ? ix->ninclude : 0,
        .throughput = {.set = ix->global && !t->pay_per_request, .read = ix->rcu,
                       .write = ix->wcu}};
  }
  int rc = put_table(out, TT_DDB_CREATE_TABLE, &r, t->created);
  free(ixs);
  char arn[400];
  memdb_table_arn(m, t, arn, sizeof(arn));
  struct tt_ddb_table_request ttl = {.table = t->name, .ttl_attribute = t->ttl_attr,
                                     .ttl_enabled = true},
                              tags = {.arn = arn, .tags = t->tags, .n_tags = t->ntags};
  if (rc == 0 && t->ttl_attr)
    rc = put_table(out, TT_DDB_UPDATE_TIME_TO_LIVE, &ttl, 0);
  if (rc == 0 && t->ntags)
    rc = put_table(out, TT_DDB_TAG_RESOURCE, &tags, 0);
  return rc;
}

/* A file a snapshot's records go to as they are made (a snapshot's child:
 * it never holds the whole snapshot in memory). */
struct snap_sink {
  struct memdb_wal *w;
  int fd;
  uint64_t off; /* bytes written */
};

/* A snapshot being serialized: its records are built in place in out,
 * each after the room of its header, and framed once closed. */
struct snap_out {
  struct tt_buf *out;
  size_t start;           /* where the open record begins (its header) */
  struct snap_sink *sink; /* NULL: out keeps the whole snapshot */
};

static int rec_open(struct snap_out *o) {
  o->start = o->out->len;
  return tt_buf_append(o->out, no_header, sizeof(no_header));
}

/* The payload bytes of the open record. */
static size_t rec_len(const struct snap_out *o) {
  return o->out->len - o->start - MEMDB_WAL_HEADER;
}

/* Frames the open record (an empty one stays open) and opens the next;
 * with a sink, out goes to its file once it holds SNAP_CHUNK bytes. -1:
 * out of memory, or the write failed (errno). */
static int rec_close(struct snap_out *o) {
  size_t n = rec_len(o);
  if (n == 0)
    return 0;
  if (memdb_wal_seal((unsigned char *)o->out->data + o->start, n) != 0)
    return -1;
  struct snap_sink *sink = o->sink;
  if (sink && o->out->len >= SNAP_CHUNK) {
    if (write_all(sink->w, sink->fd, o->out->data, o->out->len, sink->off) != 0)
      return -1;
    sink->off += o->out->len;
    tt_buf_reset(o->out);
  }
  return rec_open(o);
}

/* One item of a snapshot (memdb_table_each): its record, closed once the
 * open one holds SNAP_CHUNK bytes. */
static int snap_item(const struct memdb_table *t, struct memdb_item *it, void *arg) {
  struct snap_out *o = arg;
  if (memdb_wal_put_stored(o->out, t, it) != 0 || (rec_len(o) >= SNAP_CHUNK && rec_close(o) != 0))
    return -1;
  return 0;
}

/* Serializes every table into out: header, per table its definition, TTL
 * and items in records of about SNAP_CHUNK bytes, end. Items are written
 * from their stored encoding. With a sink, what out held so far is written
 * as it goes (out keeps the rest). */
static int serialize(struct memdb *m, uint64_t gen, struct tt_buf *out, struct snap_sink *sink) {
  struct snap_out o = {out, 0, sink};
  if (rec_open(&o) != 0 || memdb_wal_put_header(out, gen) != 0 || rec_close(&o) != 0)
    return -1;
  for (const struct memdb_table *t = m->tables; t; t = t->next) {
    if (t->status == MEMDB_DELETING) /* its DeleteTable was logged before */
      continue;
    if (put_table_of(m, out, t) != 0)
      return -1;
    if (rec_close(&o) != 0)
      return -1;
    if (memdb_table_each(t, snap_item, &o) != 0 || rec_close(&o) != 0)
      return -1;
  }
  if (memdb_wal_put_end(out) != 0 || rec_close(&o) != 0)
    return -1;
  out->len = o.start; /* the record opened last stays empty */
  out->data[out->len] = '\0';
  return 0;
}

/* Writes the snapshot file `name` and syncs it: the bytes of data, or
 * (data NULL) the tables serialized for generation gen, written as they
 * are made. Returns 0 or an errno (the file removed); *bytes (when not
 * NULL) gets the bytes written. */
static int write_snapshot(struct memdb_wal *w, const char *name, const struct tt_buf *data,
                          uint64_t gen, uint64_t *bytes) {
  struct tt_buf b;
  struct snap_sink sink = {w, -1, 0};
  int err = 0;
  tt_buf_init(&b, 0);
  errno = 0;
  sink.fd = openat(w->dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (sink.fd < 0 || (data == NULL && serialize(w->m, gen, &b, &sink) != 0) ||
      write_all(w, sink.fd, (data ? data : &b)->data, (data ? data : &b)->len, sink.off) != 0 ||
      do_fsync(w, sink.fd) != 0)
    err = errno ? errno : EIO;
  if (sink.fd >= 0 && close(sink.fd) != 0 && err == 0)
    err = errno ? errno : EIO;
  if (err)
    unlinkat(w->dirfd, name, 0);
  if (bytes)
    *bytes = sink.off + (data ? data : &b)->len;
  tt_buf_free(&b);
  return err;
}

/* At start-up, when the logs replayed passed the snapshot bound: a snapshot
 * of what was loaded, written before the daemon serves (nothing else runs
 * yet), so the next start reads it instead of the logs. */
static int compact_at_start(struct memdb_wal *w) {
  uint64_t gen = w->gen + 1, bytes;
  int err = write_snapshot(w, "snapshot.tmp", NULL, gen, &bytes);
  if (err == 0 && (err = put_snapshot(w, "snapshot.tmp")) != 0)
    unlinkat(w->dirfd, "snapshot.tmp", 0);
  if (err != 0) {
    errno = err;
    return -1;
  }
  remove_logs_before(w, gen);
  w->gen = w->fd_gen = gen;
  w->durable = 0;
  w->last_snap = bytes;
  w->st.snapshots++;
  return 0;
}

/* What a snapshot's child reports through its pipe. */
struct snap_report {
  int32_t err; /* 0, or the errno of the step that failed */
  uint32_t pad;
  uint64_t bytes; /* of the snapshot written */
  uint64_t ns;    /* the child's time to serialize, write and sync it */
};
_Static_assert(sizeof(struct snap_report) == sizeof(((struct memdb_wal *)0)->snap_report),
               "the report's room");

/* Closes the descriptors from..to (inclusive). */
static void close_span(unsigned from, unsigned to) {
  if (close_range(from, to, 0) == 0)
    return;
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 1 << 20)
    max = 1 << 20;
  for (unsigned fd = from; fd <= to && fd < (unsigned)max; fd++)
    close((int)fd);
}

/* Closes every descriptor from 3 on but keep_a and keep_b. */
static void close_others(int keep_a, int keep_b) {
  unsigned keep[2] = {(unsigned)(keep_a < keep_b ? keep_a : keep_b),
                      (unsigned)(keep_a < keep_b ? keep_b : keep_a)};
  unsigned from = 3;
  for (int i = 0; i < 2; i++) {
    if (keep[i] < from)
      continue; /* a standard descriptor, or the same as the other */
    if (keep[i] > from)
      close_span(from, keep[i] - 1);
    from = keep[i] + 1;
  }
  close_span(from, ~0u);
}

/* The child of a snapshot: never returns, never touches the loop, writes
 * no log line, leaves with _exit. Its memory is the daemon's at the fork. */
static void snap_child(struct memdb_wal *w, uint64_t gen, int wfd, int parent)
    __attribute__((noreturn));
static void snap_child(struct memdb_wal *w, uint64_t gen, int wfd, int parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent)
    _exit(3); /* the daemon died before the line above */
  /* The daemon's signal handlers belong to its loop. */
  static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
    signal(sigs[i], SIG_DFL);
  signal(SIGPIPE, SIG_IGN);
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_UNBLOCK, &all, NULL);
  /* Not the LOCK (a restarted daemon takes it while this child lingers),
   * nor the listening sockets, connections and log of the daemon. */
  close_others(w->dirfd, wfd);
  struct snap_report r = {0};
  uint64_t t0 = uv_hrtime();
  char name[40];
  snap_tmp_name(name, sizeof(name), (int)getpid());
  r.err = write_snapshot(w, name, NULL, gen, &r.bytes);
  r.ns = uv_hrtime() - t0;
  ssize_t n;
  do
    n = write(wfd, &r, sizeof(r));
  while (n < 0 && errno == EINTR);
  _exit(r.err == 0 && n == (ssize_t)sizeof(r) ? 0 : 1);
}

static void snap_proceed(struct memdb_wal *w);

static void snap_poll_closed(uv_handle_t *h) {
  struct memdb_wal *w = h->data;
  free(h);
  memdb_handle_closed(w->m);
}

/* The child ended (its pipe closed; else, when the pipe failed, it is
 * killed first): reaped, and its result taken. */
static void snap_reap(struct memdb_wal *w, bool eof) {
  if (!eof) {
    kill(w->snap_pid, SIGKILL);
    w->snap_report_n = 0; /* a failure */
  }
  uv_poll_stop(w->snap_poll);
  w->m->open_handles++;
  uv_close((uv_handle_t *)w->snap_poll, snap_poll_closed);
  w->snap_poll = NULL;
  close(w->snap_rfd);
  w->snap_rfd = -1;
  int status = 0;
  pid_t r;
  do
    r = waitpid(w->snap_pid, &status, 0);
  while (r < 0 && errno == EINTR);
  w->snap_pid = 0;
  w->snap_killed = false;
  if (!w->snap_forked) { /* given up meanwhile */
    unlinkat(w->dirfd, w->snap_tmp, 0);
    if (w->closing)
      close_step(w);
    return;
  }
  struct snap_report rep = {0};
  memcpy(&rep, w->snap_report, sizeof(rep));
  bool whole = w->snap_report_n == sizeof(rep) && r > 0 && WIFEXITED(status) &&
               WEXITSTATUS(status) == 0;
  w->snap_child_done = true;
  w->snap_err = whole ? 0 : rep.err && w->snap_report_n == sizeof(rep) ? rep.err : EIO;
  w->snap_len = rep.bytes;
  w->snap_child_ms = (double)rep.ns / 1e6;
  snap_proceed(w);
}

static void snap_poll_cb(uv_poll_t *h, int status, int events) {
  struct memdb_wal *w = h->data;
  (void)events;
  bool eof = false;
  while (status == 0) {
    unsigned char tmp[sizeof(w->snap_report)];
    ssize_t n = read(w->snap_rfd, tmp, sizeof(tmp));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return; /* more to come */
    if (n > 0) {
      size_t room = sizeof(w->snap_report) - w->snap_report_n;
      size_t k = (size_t)n < room ? (size_t)n : room;
      memcpy(w->snap_report + w->snap_report_n, tmp, k);
      w->snap_report_n += k;
      continue;
    }
    eof = n == 0; /* the child exited */
    break;
  }
  snap_reap(w, eof);
}

/* Forks the child of a snapshot of generation gen. 0, or -1 (no child). */
static int snap_fork(struct memdb_wal *w, uint64_t gen) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0)
    return -1;
  uv_poll_t *poll = malloc(sizeof(*poll));
  if (poll == NULL) {
    close(p[0]);
    close(p[1]);
    return -1;
  }
  int parent = (int)getpid();
  int pid = w->m->opts.fork_hook ? w->m->opts.fork_hook(w->m->opts.hook_arg) : (int)fork();
  if (pid == 0)
    snap_child(w, gen, p[1], parent);
  int e = errno;
  close(p[1]);
  if (pid < 0 || uv_poll_init(w->m->base.loop, poll, p[0]) != 0) {
    if (pid > 0) { /* cannot watch it: it goes, the loop takes the snapshot */
      kill(pid, SIGKILL);
      while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
      char name[40];
      snap_tmp_name(name, sizeof(name), pid);
      unlinkat(w->dirfd, name, 0);
      e = EIO;
    }
    close(p[0]);
    free(poll);
    log_dir(TT_LOG_WARN, "memdb.snapshot_fork_failed", w, "error", strerror(e), "message",
            "serializing the snapshot on the loop instead");
    return -1;
  }
  poll->data = w;
  uv_poll_start(poll, UV_READABLE | UV_DISCONNECT, snap_poll_cb);
  w->snap_poll = poll;
  w->snap_rfd = p[0];
  w->snap_pid = pid;
  snap_tmp_name(w->snap_tmp, sizeof(w->snap_tmp), pid);
  w->snap_killed = false;
  w->snap_report_n = 0;
  w->snap_forked = true;
  w->snap_ready = w->snap_child_done = false;
  return 0;
}

/* Called before a batch leaves: when the log has grown past the bound, a
 * snapshot of the state (which includes every record of this batch) is
 * taken now, by a forked child (or serialized on the loop when fork
 * fails), and later records go to a new generation. */
static void maybe_snapshot(struct memdb_wal *w) {
  if (w->snap_gen || w->snap_pid > 0 || w->closing || w->broken)
    return;
  uint64_t bound = snap_bound(w);
  uint64_t size = w->fd_gen == w->gen ? w->durable + w->pend.len : w->pend.len;
  if (size < bound)
    return;
  uint64_t gen = w->gen + 1, t0 = uv_hrtime();
  int rc = snap_fork(w, gen);
  if (rc != 0) { /* no child: serialized here (snap_ms: that time, else the fork's) */
    tt_buf_reset(&w->snap);
    t0 = uv_hrtime();
    rc = serialize(w->m, gen, &w->snap, NULL);
    w->snap_len = w->snap.len;
  }
  w->snap_ms = (double)(uv_hrtime() - t0) / 1e6;
  if (rc != 0) {
    tt_buf_free(&w->snap);
    snap_warn(w, "out of memory serializing the tables");
    return;
  }
  w->snap_gen = gen;
}

/* Gives up the snapshot of snap_gen before it is put in place (the records
 * it holds failed): a child still running is killed, and its file removed
 * once it is reaped. */
static void snap_drop(struct memdb_wal *w) {
  tt_buf_free(&w->snap);
  if (w->snap_forked) {
    if (w->snap_pid > 0 && !w->snap_killed) {
      kill(w->snap_pid, SIGKILL);
      w->snap_killed = true;
    } else if (w->snap_pid <= 0) {
      unlinkat(w->dirfd, w->snap_tmp, 0);
    }
  }
  w->snap_forked = w->snap_ready = w->snap_child_done = false;
  w->snap_gen = 0;
}

static void snap_work_cb(uv_work_t *req) {
  struct memdb_wal *w = req->data;
  /* A forked child wrote its file; else it is written here. */
  const char *tmp = w->snap_forked ? w->snap_tmp : "snapshot.tmp";
  w->snap_err = w->snap_forked ? 0 : write_snapshot(w, tmp, &w->snap, 0, NULL);
  if (w->snap_err == 0)
    w->snap_err = put_snapshot(w, tmp);
}

/* The snapshot of snap_gen is over, put in place or not (its child's file
 * removed, the failure logged when err is not 0). */
static void snap_finish(struct memdb_wal *w, int err) {
  if (err)
    snap_warn(w, strerror(err));
  snap_drop(w);
  if (w->closing)
    close_step(w);
}

static void snap_after_cb(uv_work_t *req, int status) {
  struct memdb_wal *w = req->data;
  w->snap_busy = false;
  int err = w->snap_err ? w->snap_err : status != 0 ? EIO : 0;
  if (err == 0) {
    remove_logs_before(w, w->snap_gen); /* the logs it covers are no longer needed */
    w->last_snap = w->snap_len;
    w->st.snapshots++;
    w->st.snapshot_bytes = w->snap_len;
    struct tt_log_line l;
    tt_log_begin(&l, TT_LOG_INFO, "memdb.snapshot_written");
    tt_log_str(&l, "data_dir", w->dir);
    tt_log_int(&l, "bytes", (int64_t)w->snap_len);
    if (w->snap_forked) {
      tt_log_ms(&l, "fork_ms", w->snap_ms);
      tt_log_ms(&l, "child_ms", w->snap_child_ms);
    } else {
      tt_log_ms(&l, "serialize_ms", w->snap_ms);
    }
    tt_log_end(&l);
  }
  snap_finish(w, err);
}

static void snap_queue(struct memdb_wal *w) {
  w->snap_busy = true;
  w->snap_work.data = w;
  if (uv_queue_work(w->m->base.loop, &w->snap_work, snap_work_cb, snap_after_cb) != 0) {
    w->snap_busy = false;
    snap_drop(w);
  }
}

/* A forked snapshot goes in place once both its child reported and the
 * logs it covers are written. */
static void snap_proceed(struct memdb_wal *w) {
  if (!w->snap_forked || !w->snap_ready || !w->snap_child_done || w->snap_busy)
    return;
  if (w->snap_err)
    snap_finish(w, w->snap_err);
  else
    snap_queue(w);
}

/* The records of the generations before snap_gen are written. */
static void snap_start(struct memdb_wal *w) {
  w->snap_ready = true;
  if (w->snap_forked)
    snap_proceed(w);
  else
    snap_queue(w);
}

/* ---- shutdown ---- */

static void wal_handle_closed(uv_handle_t *h) {
  struct memdb_wal *w = h->data;
  memdb_handle_closed(w->m);
}

/* Waits for the lanes, then a last batch syncs and closes the log. */
static void close_step(struct memdb_wal *w) {
  if (w->snap_pid > 0 && w->snap_forked) {
    /* A child still encoding: killed (the logs hold what it would have
     * written), reaped and its file removed before the log closes. */
    snap_drop(w);
  }
  if (w->busy || w->snap_busy || w->snap_pid > 0)
    return;
  if (w->snap_gen) /* never put in place: the logs still hold it */
    snap_drop(w);
  if (w->closed) {
    if (w->fd >= 0)
      close(w->fd);
    w->fd = -1;
    w->closing = false;
    struct tt_log_line l;
    tt_log_begin(&l, TT_LOG_NOTICE, "memdb.data_dir_closed");
    tt_log_str(&l, "data_dir", w->dir);
    tt_log_int(&l, "records", (int64_t)w->st.records);
    tt_log_int(&l, "batches", (int64_t)w->st.batches);
    tt_log_int(&l, "fsyncs", (int64_t)w->st.fsyncs);
    tt_log_int(&l, "snapshots", (int64_t)w->st.snapshots);
    tt_log_end(&l);
    memdb_handle_closed(w->m);
    return;
  }
  if (w->fd < 0) {
    w->closed = true;
    close_step(w);
    return;
  }
  map_drop(w);
  w->fly_final = true;
  fly_batch(w, w->fd_gen, true, false);
}

void memdb_wal_close(struct memdb *m) {
  struct memdb_wal *w = m->wal;
  if (w == NULL)
    return;
  uv_handle_t *open[2] = {w->timer_open ? (uv_handle_t *)&w->timer : NULL,
                          w->prepare_open ? (uv_handle_t *)&w->prepare : NULL};
  for (int i = 0; i < 2; i++)
    if (open[i] != NULL) {
      m->open_handles++;
      uv_close(open[i], wal_handle_closed);
    }
  w->timer_open = w->prepare_open = false;
  m->open_handles++; /* released by close_step */
  w->closing = true;
  close_step(w);
}

void memdb_wal_free(struct memdb *m) {
  struct memdb_wal *w = m->wal;
  if (w == NULL)
    return;
  map_drop(w);
  if (w->snap_pid > 0) { /* the loop did not run the close to its end */
    kill(w->snap_pid, SIGKILL);
    while (waitpid(w->snap_pid, NULL, 0) < 0 && errno == EINTR)
      ;
    unlinkat(w->dirfd, w->snap_tmp, 0);
  }
  if (w->snap_rfd >= 0)
    close(w->snap_rfd);
  if (w->fd >= 0)
    close(w->fd);
  if (w->lockfd >= 0)
    close(w->lockfd); /* releases the lock */
  if (w->dirfd >= 0)
    close(w->dirfd);
  tt_buf_free(&w->pend);
  tt_buf_free(&w->fly);
  tt_buf_free(&w->rec);
  tt_buf_free(&w->snap);
  free(w->held_end);
  free(w->dir);
  free(w);
  m->wal = NULL;
}

void tt_memdb_wal_stats(struct tt_backend *b, struct tt_memdb_wal_stats *out) {
  struct memdb *m = b->impl;
  memset(out, 0, sizeof(*out));
  if (m->wal)
    *out = m->wal->st;
}
