/* The api_ctx of the validation tests that run jobs (test_val_local,
 * test_val_calibrate, test_val_slurm): a database v.db in a fresh
 * /tmp/cdplan-<tag>-XXXXXX folder that also holds the jobs' folders, and
 * the folder's removal. Header only (static inline): no link line. */
#ifndef CDPLAN_TESTS_VALIDATE_VAL_TMPCTX_H
#define CDPLAN_TESTS_VALIDATE_VAL_TMPCTX_H

#include <stdio.h>
#include <stdlib.h>

#include "api/api.h"

/* dir (128 bytes) made, db_path (192 bytes) = dir/v.db, *ctx opened on it.
 * 0 or -1. */
static inline int val_tmpctx_open(char dir[128], char db_path[192], const char *tag,
                                  api_ctx **ctx) {
  svc_err err;
  snprintf(dir, 128, "/tmp/cdplan-%s-XXXXXX", tag);
  if (!mkdtemp(dir)) return -1;
  snprintf(db_path, 192, "%s/v.db", dir);
  *ctx = NULL;
  return api_ctx_new(ctx, db_path, &err) == 0 ? 0 : -1;
}

/* ctx freed and dir removed with everything in it; 0 or -1. */
static inline int val_tmpctx_close(api_ctx *ctx, const char *dir) {
  char rm[256];
  api_ctx_free(ctx);
  snprintf(rm, sizeof rm, "rm -rf %s", dir);
  return system(rm) == 0 ? 0 : -1;
}

#endif
