/* SPDX-License-Identifier: Apache-2.0 */
/* bench_port.h -- the PORT argument of the bench servers (bare_mhd.c,
 * otlp_sink.c), which are each built as one file and include this. */
#ifndef TT_BENCH_PORT_H
#define TT_BENCH_PORT_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The one argument: a port 0-65535 (0 picks a free one). Returns 0, or 2
 * (the exit status) after a usage line on stderr. */
static int bench_port_arg(int argc, char **argv, uint16_t *out) {
  char *end = NULL;
  unsigned long v = 0;
  errno = 0;
  if (argc == 2)
    v = strtoul(argv[1], &end, 10);
  if (argc != 2 || errno != 0 || end == argv[1] || *end != '\0' || v > 65535) {
    fprintf(stderr, "usage: %s PORT\n", argv[0]);
    return 2;
  }
  *out = (uint16_t)v;
  return 0;
}

#endif
