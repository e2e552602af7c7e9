/* bench/costmodel_load: shared by bench/costmodel_accuracy and
 * tests/costmodel: read a hardware descriptor file (data/hardware/NAME.json)
 * into a cost_hw, and the measurement files of a directory into samples.
 * File reading lives here, not in costmodel/ (which does no I/O). */
#ifndef CDPLAN_BENCH_COSTMODEL_LOAD_H
#define CDPLAN_BENCH_COSTMODEL_LOAD_H

#include <stddef.h>

#include "costmodel/costmodel.h"

/* 0 or -1 (message on stderr). */
int cm_load_hw(const char *path, cost_hw *hw);
/* gemm.json + memory_ops.json of dir; *out malloc'd. 0 or -1. */
int cm_load_samples(const char *dir, cost_sample **out, size_t *n);
/* ceilings.json of dir: copy bytes/s and 8192^3 FLOP/s per dtype (0 absent). */
int cm_load_ceilings(const char *dir, double *copy_bw, double flops[COST_DT__COUNT]);
/* Fold (0/1) of a sample: a hash of its shape, the same for every dtype
 * and pass of one shape, so cross-validation holds whole shapes out. */
int cm_fold(const cost_sample *s);

/* A whole file (NUL-terminated, malloc'd; at most 256 MiB), or NULL; where
 * PATH is absent, its gzip copy PATH.gz decompressed (large sweep files are
 * kept as gzip -n copies to keep the repository small). */
char *cm_slurp(const char *path, size_t *len);
/* 1 where PATH or its gzip copy PATH.gz exists (what cm_slurp would read), else 0. */
int cm_exists(const char *path);

#endif
