/* SPDX-License-Identifier: Apache-2.0 */
/* creds_process.c -- credential_process: runs the configured command on the
 * loop (uv_spawn, no shell), with a timeout and an output cap, and parses
 * the JSON it prints. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dynamodb/creds_internal.h"

#define PROCESS_OUTPUT_CAP (64u * 1024)
#define PROCESS_MAX_ARGS 64

struct creds_process {
  struct creds_job *job;
  uv_process_t proc;
  uv_pipe_t out;
  uv_timer_t timer;
  int open_handles;
  bool spawned, exited, pipe_closed, timer_closed, timed_out, overflow;
  int spawn_error;
  int64_t exit_status;
  int term_signal;
  char *buf; /* PROCESS_OUTPUT_CAP + 1 bytes, allocated once; wiped on free */
  size_t len;
  char *argv_store; /* the split command, NUL-separated */
  char *argv[PROCESS_MAX_ARGS + 1];
};

/* Splits the command the way the AWS CLI documents it: whitespace separates
 * arguments, double quotes group an argument containing spaces (the quotes
 * are dropped). No shell, so no expansion of any kind. */
static int split_command(struct creds_process *p, const char *cmd) {
  size_t n = strlen(cmd);
  p->argv_store = malloc(n + 1);
  if (p->argv_store == NULL)
    return -1;
  char *w = p->argv_store;
  int argc = 0;
  const char *s = cmd;
  for (;;) {
    while (*s == ' ' || *s == '\t')
      s++;
    if (*s == '\0')
      break;
    if (argc == PROCESS_MAX_ARGS)
      return -1;
    p->argv[argc++] = w;
    bool quoted = false;
    while (*s && (quoted || (*s != ' ' && *s != '\t'))) {
      if (*s == '"')
        quoted = !quoted;
      else
        *w++ = *s;
      s++;
    }
    if (quoted)
      return -1; /* unbalanced quote */
    *w++ = '\0';
  }
  p->argv[argc] = NULL;
  return argc > 0 ? 0 : -1;
}

static void process_free(struct creds_process *p) {
  creds_free_secret(p->buf, PROCESS_OUTPUT_CAP + 1);
  free(p->argv_store);
  free(p);
}

/* All handles are closed: judge the run and report. */
static void finish(struct creds_process *p) {
  struct creds_job *job = p->job;
  struct creds_chain *ch = job->ch;
  const char *why = NULL;
  int rc = -1;
  job->proc = NULL;
  if (job->cancelled) {
    /* reported as cancelled; the chain ignores the outcome */
  } else if (!p->spawned) {
    creds_job_fail(job, "credential_process could not be started (%s)",
                   uv_err_name(p->spawn_error));
  } else if (p->timed_out) {
    creds_job_fail(job, "credential_process did not finish within %u ms",
                   ch->process_timeout_ms);
  } else if (p->overflow) {
    creds_job_fail(job, "credential_process printed more than %u bytes", PROCESS_OUTPUT_CAP);
  } else if (p->term_signal != 0) {
    creds_job_fail(job, "credential_process was killed by signal %d", p->term_signal);
  } else if (p->exit_status != 0) {
    creds_job_fail(job, "credential_process exited with status %lld",
                   (long long)p->exit_status);
  } else if (creds_from_json(p->buf, p->len, "SessionToken", true, false, "process", &job->out,
                             &why) != 0) {
    creds_job_fail(job, "credential_process output: %s", why);
  } else {
    rc = 0;
  }
  process_free(p);
  creds_job_async_done(job, rc);
}

static void on_handle_closed(uv_handle_t *h) {
  struct creds_process *p = h->data;
  if (--p->open_handles == 0)
    finish(p);
}

static void close_pipe(struct creds_process *p) {
  if (p->pipe_closed)
    return;
  p->pipe_closed = true;
  uv_close((uv_handle_t *)&p->out, on_handle_closed);
}

/* The timer outlives the process until stdout is closed too: a grandchild
 * holding the pipe open must not keep the fetch waiting forever. */
static void maybe_close_timer(struct creds_process *p) {
  if (p->timer_closed || !p->exited || !p->pipe_closed)
    return;
  p->timer_closed = true;
  uv_close((uv_handle_t *)&p->timer, on_handle_closed);
}

/* Ends the run early: the child killed, stdout closed, the timer once both
 * are done. */
static void stop(struct creds_process *p) {
  if (p->spawned && !p->exited)
    uv_process_kill(&p->proc, SIGKILL); /* ESRCH when it already ended: fine */
  close_pipe(p);
  maybe_close_timer(p);
}

static void on_exit_cb(uv_process_t *proc, int64_t exit_status, int term_signal) {
  struct creds_process *p = proc->data;
  p->exited = true;
  p->exit_status = exit_status;
  p->term_signal = term_signal;
  uv_close((uv_handle_t *)&p->proc, on_handle_closed);
  maybe_close_timer(p);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  struct creds_process *p = h->data;
  (void)suggested;
  /* One byte past the cap is available, so overflow is detectable. */
  *buf = uv_buf_init(p->buf + p->len, (unsigned)(PROCESS_OUTPUT_CAP + 1 - p->len));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  struct creds_process *p = s->data;
  (void)buf;
  if (nread > 0) {
    p->len += (size_t)nread;
    if (p->len > PROCESS_OUTPUT_CAP) {
      p->overflow = true;
      p->len = PROCESS_OUTPUT_CAP;
      stop(p);
    }
    return;
  }
  if (nread < 0) { /* UV_EOF or a read error */
    close_pipe(p);
    maybe_close_timer(p);
  }
}

static void on_timeout(uv_timer_t *t) {
  struct creds_process *p = t->data;
  p->timed_out = true;
  stop(p);
}

void creds_process_cancel(struct creds_job *job) {
  if (job->proc)
    stop(job->proc);
}

int creds_process_start(struct creds_job *job, const char *command) {
  struct creds_chain *ch = job->ch;
  struct creds_process *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return creds_job_fail(job, "out of memory");
  p->job = job;
  p->buf = malloc(PROCESS_OUTPUT_CAP + 1);
  if (p->buf == NULL) {
    process_free(p);
    return creds_job_fail(job, "out of memory");
  }
  if (split_command(p, command) != 0) {
    process_free(p);
    return creds_job_fail(job, "credential_process is empty, has an unbalanced quote or "
                               "more than 64 arguments");
  }
  /* From here on every path ends in finish() after the handles closed.
   * Neither init can fail. */
  uv_pipe_init(ch->loop, &p->out, 0);
  uv_timer_init(ch->loop, &p->timer);
  p->out.data = p;
  p->timer.data = p;
  p->proc.data = p;
  uv_stdio_container_t stdio[3];
  stdio[0].flags = UV_IGNORE;
  stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
  stdio[1].data.stream = (uv_stream_t *)&p->out;
  /* stderr is discarded: a tool may print secrets there, and our error
   * messages must not carry them. */
  stdio[2].flags = UV_IGNORE;
  uv_process_options_t opts;
  memset(&opts, 0, sizeof(opts));
  opts.exit_cb = on_exit_cb;
  opts.file = p->argv[0];
  opts.args = p->argv;
  opts.env = ch->env;
  opts.stdio_count = 3;
  opts.stdio = stdio;
  job->proc = p;
  int rc = uv_spawn(ch->loop, &p->proc, &opts);
  if (rc != 0) {
    /* libuv wants the process handle closed even after a failed spawn. */
    p->spawn_error = rc;
    p->exited = true;
    p->open_handles = 3;
    uv_close((uv_handle_t *)&p->proc, on_handle_closed);
    close_pipe(p);
    maybe_close_timer(p);
    return CREDS_ASYNC;
  }
  p->spawned = true;
  p->open_handles = 3;
  rc = uv_read_start((uv_stream_t *)&p->out, on_alloc, on_read);
  if (rc != 0) {
    p->spawn_error = rc;
    p->spawned = false;
    uv_process_kill(&p->proc, SIGKILL);
    close_pipe(p);
    return CREDS_ASYNC; /* exit_cb closes the rest */
  }
  uv_timer_start(&p->timer, on_timeout, ch->process_timeout_ms, 0);
  return CREDS_ASYNC;
}
