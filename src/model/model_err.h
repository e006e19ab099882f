/* SPDX-License-Identifier: Apache-2.0 */
/* model_err.h -- ValidationError formatting shared by the model module's files. */
#ifndef TT_MODEL_MODEL_ERR_H
#define TT_MODEL_MODEL_ERR_H

#include <stdarg.h>

#include "util/error.h"

/* Formats a message (truncated to fit struct tt_error, never in the middle of
 * a UTF-8 sequence, so the API layer can always put it into JSON) and sets
 * *err to `code` with `field` (may be NULL). Always returns -1. */
int tt_model_errorf(struct tt_error *err, enum tt_err_code code, const char *field,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
