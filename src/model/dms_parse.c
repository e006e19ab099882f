/* SPDX-License-Identifier: Apache-2.0 */
/* dms_parse.c -- DMS file bytes (YAML's JSON-compatible subset, or JSON) to jansson trees. */
#include "model/dms_parse.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <yaml.h>

#include "value/json_exact.h"


/* "models/user.yml: " or "" -- every message starts with the source. */
#define SRC_FMT "%s%s"
#define SRC_ARGS(s) ((s) ? (s) : ""), ((s) ? ": " : "")

/* One open container while the event stream is walked. Keys of a mapping
 * arrive as scalar events; `key` holds the pending one (NULL: none) until
 * its value arrives. */
struct yframe {
  json_t *node;
  char *key;
  size_t key_len;
};

struct ystate {
  struct yframe stack[TT_DMS_MAX_DEPTH];
  size_t depth;
  json_t *docs; /* array of finished documents */
  json_t *root; /* the document being built */
  const char *source;
  struct tt_error *err;
};

static int yerr(struct ystate *st, const yaml_mark_t *mark, const char *what) {
  return tt_error_set(st->err, TT_ERR_VALIDATION, NULL,
                      SRC_FMT "line %zu column %zu: %s", SRC_ARGS(st->source),
                      (size_t)mark->line + 1, (size_t)mark->column + 1, what);
}

/* Out of memory while building the tree: Internal, not the user's fault. */
static int yoom(struct ystate *st) {
  return tt_error_set(st->err, TT_ERR_INTERNAL, NULL, SRC_FMT "out of memory",
                      SRC_ARGS(st->source));
}

/* Whether `s` (n bytes) is one of the spellings in the NULL-terminated list. */
static bool is_one_of(const char *s, size_t n, const char *const *list) {
  for (; *list; list++)
    if (strlen(*list) == n && memcmp(*list, s, n) == 0)
      return true;
  return false;
}

/* A YAML 1.2 core-schema integer: [-+]?[0-9]+ */
static bool is_int_text(const char *s, size_t n) {
  size_t i = 0;
  if (i < n && (s[i] == '-' || s[i] == '+'))
    i++;
  if (i == n)
    return false;
  for (; i < n; i++)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

/* Resolves a plain (unquoted, untagged) scalar per the YAML 1.2 core schema,
 * keeping anything that a JSON integer cannot hold exactly as text. */
static json_t *resolve_plain(const char *s, size_t n) {
  static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
  static const char *const trues[] = {"true", "True", "TRUE", NULL};
  static const char *const falses[] = {"false", "False", "FALSE", NULL};
  if (is_one_of(s, n, nulls))
    return json_null();
  if (is_one_of(s, n, trues))
    return json_true();
  if (is_one_of(s, n, falses))
    return json_false();
  if (is_int_text(s, n) && n < 32) {
    char buf[32];
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    char *end = NULL;
    long long v = strtoll(buf, &end, 10);
    if (errno == 0 && end == buf + n)
      return json_integer((json_int_t)v);
  }
  /* Decimals, exponents and out-of-range integers stay text: jansson could
   * only hold them as doubles, which would change their digits. */
  return json_stringn(s, n);
}

static bool tag_is(const yaml_char_t *tag, const char *want) {
  return tag != NULL && strcmp((const char *)tag, want) == 0;
}

/* Rejects anchors and unsupported tags on a node event. */
static int check_node_props(struct ystate *st, const yaml_event_t *ev, const yaml_char_t *anchor,
                            const yaml_char_t *tag, const char *allowed_tag) {
  if (anchor != NULL)
    return yerr(st, &ev->start_mark,
                "YAML anchors (&name) are not supported in DMS files; write the value out");
  if (tag == NULL || tag_is(tag, "!") || tag_is(tag, allowed_tag))
    return 0;
  char what[200];
  snprintf(what, sizeof(what),
           "YAML tag \"%.*s\" is not supported in DMS files (only !!str, !!map, !!seq)",
           tt_utf8_prefix((const char *)tag, 80), (const char *)tag);
  return yerr(st, &ev->start_mark, what);
}

/* Attaches a finished node to the open container (or makes it the document
 * root). Steals `node` in every case. */
static int attach(struct ystate *st, const yaml_event_t *ev, json_t *node) {
  if (node == NULL)
    return yerr(st, &ev->start_mark, "out of memory or invalid UTF-8 in a scalar");
  if (st->depth == 0) {
    if (st->root != NULL) {
      json_decref(node);
      return yerr(st, &ev->start_mark, "more than one root node in a document");
    }
    st->root = node;
    return 0;
  }
  struct yframe *top = &st->stack[st->depth - 1];
  if (json_is_array(top->node)) {
    if (json_array_append_new(top->node, node) != 0)
      return yoom(st);
    return 0;
  }
  /* Mapping: a key must be pending, since keys are handled in on_scalar. */
  if (top->key == NULL) {
    json_decref(node);
    return yerr(st, &ev->start_mark,
                "mapping keys must be plain strings (no lists or maps as keys)");
  }
  if (json_object_getn(top->node, top->key, top->key_len) != NULL) {
    json_decref(node);
    char what[200];
    snprintf(what, sizeof(what), "duplicate key \"%.*s\"", tt_utf8_prefix(top->key, 80),
             top->key);
    return yerr(st, &ev->start_mark, what);
  }
  int rc = json_object_setn_new(top->node, top->key, top->key_len, node);
  free(top->key);
  top->key = NULL;
  if (rc != 0) /* libyaml's reader already refused invalid UTF-8 */
    return yoom(st);
  return 0;
}

static int on_scalar(struct ystate *st, const yaml_event_t *ev) {
  const char *val = (const char *)ev->data.scalar.value;
  size_t len = ev->data.scalar.length;
  if (check_node_props(st, ev, ev->data.scalar.anchor, ev->data.scalar.tag,
                       "tag:yaml.org,2002:str") != 0)
    return -1;
  if (st->depth > 0 && json_is_object(st->stack[st->depth - 1].node) &&
      st->stack[st->depth - 1].key == NULL) {
    /* A mapping key: JSON keys are strings, so take the text as written. */
    struct yframe *top = &st->stack[st->depth - 1];
    top->key = malloc(len + 1);
    if (top->key == NULL)
      return yoom(st);
    memcpy(top->key, val, len);
    top->key[len] = '\0';
    top->key_len = len;
    return 0;
  }
  bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && ev->data.scalar.tag == NULL;
  json_t *node = plain ? resolve_plain(val, len) : json_stringn(val, len);
  if (node == NULL) /* libyaml's reader already refused invalid UTF-8 */
    return yoom(st);
  return attach(st, ev, node);
}

static int push(struct ystate *st, const yaml_event_t *ev, json_t *node) {
  if (node == NULL)
    return yoom(st);
  if (st->depth >= TT_DMS_MAX_DEPTH) {
    json_decref(node);
    return yerr(st, &ev->start_mark, "nesting is too deep for a DMS document");
  }
  /* Attach first (the container is then owned by its parent or the root),
   * then keep a borrowed pointer on the stack while it fills. */
  json_incref(node);
  if (attach(st, ev, node) != 0) {
    json_decref(node);
    return -1;
  }
  st->stack[st->depth++] = (struct yframe){.node = node};
  json_decref(node); /* the parent's reference keeps it alive */
  return 0;
}

static int pop(struct ystate *st, const yaml_event_t *ev) {
  if (st->depth == 0)
    return yerr(st, &ev->start_mark, "unbalanced YAML structure");
  struct yframe *f = &st->stack[--st->depth];
  free(f->key);
  f->key = NULL;
  return 0;
}

static void ystate_clear(struct ystate *st) {
  while (st->depth > 0) {
    struct yframe *f = &st->stack[--st->depth];
    free(f->key);
  }
  json_decref(st->root);
  st->root = NULL;
}

static int on_event(struct ystate *st, const yaml_event_t *ev) {
  switch (ev->type) {
  case YAML_STREAM_START_EVENT:
  case YAML_STREAM_END_EVENT:
  case YAML_NO_EVENT:
  case YAML_DOCUMENT_START_EVENT:
    return 0;
  case YAML_DOCUMENT_END_EVENT: {
    int rc = json_array_append_new(st->docs, st->root ? st->root : json_null());
    st->root = NULL; /* the list took it, even on failure */
    return rc != 0 ? yoom(st) : 0;
  }
  case YAML_ALIAS_EVENT:
    return yerr(st, &ev->start_mark,
                "YAML aliases (*name) are not supported in DMS files; write the value out");
  case YAML_SCALAR_EVENT:
    return on_scalar(st, ev);
  case YAML_SEQUENCE_START_EVENT:
    if (check_node_props(st, ev, ev->data.sequence_start.anchor, ev->data.sequence_start.tag,
                         "tag:yaml.org,2002:seq") != 0)
      return -1;
    return push(st, ev, json_array());
  case YAML_MAPPING_START_EVENT:
    if (check_node_props(st, ev, ev->data.mapping_start.anchor, ev->data.mapping_start.tag,
                         "tag:yaml.org,2002:map") != 0)
      return -1;
    return push(st, ev, json_object());
  case YAML_SEQUENCE_END_EVENT:
  case YAML_MAPPING_END_EVENT:
    return pop(st, ev);
  }
  return yerr(st, &ev->start_mark, "unexpected YAML event");
}

static int parse_yaml(const char *data, size_t len, const char *source, json_t **out,
                      struct tt_error *err) {
  int rc = -1;
  yaml_parser_t parser;
  struct ystate st;
  memset(&st, 0, sizeof(st));
  st.source = source;
  st.err = err;
  st.docs = json_array();
  if (st.docs == NULL || !yaml_parser_initialize(&parser)) {
    json_decref(st.docs);
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
  for (;;) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev)) {
      char what[200];
      snprintf(what, sizeof(what), "YAML syntax error: %s%s%s",
               parser.problem ? parser.problem : "unknown problem",
               parser.context ? " " : "", parser.context ? parser.context : "");
      yerr(&st, &parser.problem_mark, what);
      goto fail;
    }
    int r = on_event(&st, &ev);
    bool end = ev.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&ev);
    if (r != 0)
      goto fail;
    if (end)
      break;
  }
  if (json_array_size(st.docs) == 0) {
    tt_error_set(err, TT_ERR_VALIDATION, NULL,
                 SRC_FMT "the file is empty (expected a DMS document with dms_version "
                         "and models)",
                 SRC_ARGS(source));
    goto fail;
  }
  *out = st.docs;
  st.docs = NULL;
  rc = 0;
fail:
  ystate_clear(&st);
  json_decref(st.docs);
  yaml_parser_delete(&parser);
  return rc;
}

/* Bounded: DMS text is not NUL-terminated. */
static bool all_space(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
      return false;
  return true;
}

static int parse_json(const char *data, size_t len, const char *source, json_t **out,
                      struct tt_error *err) {
  json_error_t jerr;
  json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL) {
    if (all_space(data, len))
      return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                          SRC_FMT "the file is empty (expected a DMS document with "
                                  "dms_version and models)",
                          SRC_ARGS(source));
    return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                        SRC_FMT "line %d column %d: JSON syntax error: %s",
                        SRC_ARGS(source), jerr.line, jerr.column, jerr.text);
  }
  /* jansson's own depth limit is 2048; ours is smaller so that every DMS
   * tree, whatever its syntax, has the same bound. */
  if (tt_json_too_deep(root, TT_DMS_MAX_DEPTH)) {
    json_decref(root);
    return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                        SRC_FMT "nesting is too deep for a DMS document", SRC_ARGS(source));
  }
  json_t *docs = json_array();
  if (docs == NULL || json_array_append_new(docs, root) != 0) {
    json_decref(docs);
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "out of memory");
  }
  *out = docs;
  return 0;
}

int tt_dms_parse(const char *data, size_t len, enum tt_dms_syntax syntax, const char *source,
                 json_t **out, struct tt_error *err) {
  *out = NULL;
  if (len > TT_DMS_MAX_FILE_BYTES)
    return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                        SRC_FMT "DMS text is larger than %u bytes", SRC_ARGS(source),
                        TT_DMS_MAX_FILE_BYTES);
  if (syntax == TT_DMS_SYNTAX_JSON)
    return parse_json(data, len, source, out, err);
  return parse_yaml(data, len, source, out, err);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

int tt_dms_syntax_from_path(const char *path, enum tt_dms_syntax *out) {
  if (ends_with(path, ".json")) {
    *out = TT_DMS_SYNTAX_JSON;
    return 0;
  }
  if (ends_with(path, ".yml") || ends_with(path, ".yaml")) {
    *out = TT_DMS_SYNTAX_YAML;
    return 0;
  }
  return -1;
}

/* Reads the open file f (path names it in errors) into *data (new buffer,
 * caller frees) of *len bytes. */
static int read_file(FILE *f, const char *path, char **data, size_t *len, struct tt_error *err) {
  struct stat sb;
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode))
    return tt_error_set(err, TT_ERR_VALIDATION, NULL, "%s: not a regular file", path);
  if ((uintmax_t)sb.st_size > TT_DMS_MAX_FILE_BYTES)
    return tt_error_set(err, TT_ERR_VALIDATION, NULL, "%s: larger than %u bytes", path,
                        TT_DMS_MAX_FILE_BYTES);
  size_t cap = (size_t)sb.st_size + 1;
  if ((*data = malloc(cap)) == NULL)
    return tt_error_set(err, TT_ERR_INTERNAL, NULL, "%s: out of memory", path);
  /* Read to EOF rather than trusting st_size: the file may change size
   * between fstat and read; one byte of slack detects growth. */
  *len = fread(*data, 1, cap, f);
  if (ferror(f))
    return tt_error_set(err, TT_ERR_VALIDATION, NULL, "%s: read error", path);
  if (*len == cap)
    return tt_error_set(err, TT_ERR_VALIDATION, NULL, "%s: the file changed while being read",
                        path);
  return 0;
}

int tt_dms_parse_file(const char *path, json_t **out, struct tt_error *err) {
  char *data = NULL;
  size_t len = 0;
  enum tt_dms_syntax syntax;
  *out = NULL;
  if (tt_dms_syntax_from_path(path, &syntax) != 0)
    return tt_error_set(err, TT_ERR_VALIDATION, NULL,
                        "%s: a DMS file name must end in .yml, .yaml or .json", path);
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return tt_error_set(err, TT_ERR_VALIDATION, NULL, "%s: cannot open: %s", path,
                        strerror(errno));
  int rc = read_file(f, path, &data, &len, err);
  fclose(f);
  if (rc == 0)
    rc = tt_dms_parse(data, len, syntax, path, out, err);
  free(data);
  return rc;
}
