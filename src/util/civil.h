/* SPDX-License-Identifier: Apache-2.0 */
/* civil.h -- days since 1970-01-01 to and from a proleptic Gregorian date
 * (Howard Hinnant's days_from_civil and civil_from_days), inline: UTC
 * timestamps without libc's time zone state. */
#ifndef TT_UTIL_CIVIL_H
#define TT_UTIL_CIVIL_H

#include <stdint.h>

static inline int64_t tt_days_from_civil(int64_t y, unsigned mo, unsigned d) {
  y -= mo <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = (unsigned)(y - era * 400);
  unsigned doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (int64_t)doe - 719468;
}

static inline void tt_civil_from_days(int64_t z, int64_t *y, unsigned *mo, unsigned *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned)(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *mo = mp < 10 ? mp + 3 : mp - 9;
  *y = (int64_t)yoe + era * 400 + (*mo <= 2);
}

#endif
