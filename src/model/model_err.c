/* SPDX-License-Identifier: Apache-2.0 */
/* model_err.c -- ValidationError formatting shared by the model module's files. */
#include "model/model_err.h"

/* va_list form of tt_model_errorf. Always returns -1. */
static int tt_model_verrorf(struct tt_error *err, enum tt_err_code code, const char *field,
                     const char *fmt, va_list ap) {
  /* util/error.c cuts on character boundaries. */
  return tt_error_vset(err, code, field, fmt, ap);
}

int tt_model_errorf(struct tt_error *err, enum tt_err_code code, const char *field,
                    const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tt_model_verrorf(err, code, field, fmt, ap);
  va_end(ap);
  return -1;
}
