/* names.c: wire names of the model's enums (dtypes, bounds, op kinds) and
 * the cost_result helpers every model file uses. */
#include <stdio.h>
#include <string.h>

#include "costmodel/costmodel_int.h"

static const char *const dtype_names[COST_DT__COUNT] = {"fp64", "fp32", "tf32", "bf16", "fp16",
                                                        "fp8",  "fp6",  "fp4",  "int8"};
/* Storage sizes: IEEE/OCP formats; tf32 is held in 32-bit words (NVIDIA
 * Ampere whitepaper); fp6/fp4 packed (OCP Microscaling spec v1.0). */
static const double dtype_bytes[COST_DT__COUNT] = {8, 4, 4, 2, 2, 1, 0.75, 0.5, 1};

static int parse_in(const char *const *names, int n, const char *name) {
  if (!name) return -1;
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
}

int cost_dtype_parse(const char *name) {
  int r = parse_in(dtype_names, COST_DT__COUNT, name);
  if (r < 0 && name && strcmp(name, "e4m3") == 0) r = COST_DT_FP8;
  return r;
}
const char *cost_dtype_name(cost_dtype dt) {
  return ((int)dt >= 0 && dt < COST_DT__COUNT) ? dtype_names[dt] : "unknown";
}
double cost_dtype_bytes(cost_dtype dt) {
  return ((int)dt >= 0 && dt < COST_DT__COUNT) ? dtype_bytes[dt] : 0.0;
}

static const char *const bound_names[] = {"compute", "memory", "latency", "network"};
const char *cost_bound_name(int b) {
  return (b >= 0 && b < COST_BOUND__COUNT) ? bound_names[b] : "unknown";
}

static const char *const ew_names[] = {"add", "gelu", "layernorm", "softmax"};
int cost_ew_kind_parse(const char *name) { return parse_in(ew_names, COST_EW__COUNT, name); }
const char *cost_ew_kind_name(int k) {
  return (k >= 0 && k < COST_EW__COUNT) ? ew_names[k] : "unknown";
}

static const char *const pass_names[] = {"fwd", "fwd_bwd"};
int cost_emb_pass_parse(const char *name) { return parse_in(pass_names, COST_EMB__COUNT, name); }
const char *cost_emb_pass_name(int p) {
  return (p >= 0 && p < COST_EMB__COUNT) ? pass_names[p] : "unknown";
}

static const char *const coll_names[] = {"allreduce", "allgather", "reducescatter", "alltoall"};
int cost_coll_kind_parse(const char *name) { return parse_in(coll_names, COST_COLL__COUNT, name); }
const char *cost_coll_kind_name(int k) {
  return (k >= 0 && k < COST_COLL__COUNT) ? coll_names[k] : "unknown";
}

static const char *const scope_names[] = {"node", "cluster"};
int cost_scope_parse(const char *name) { return parse_in(scope_names, COST_SCOPE__COUNT, name); }
const char *cost_scope_name(int s) {
  return (s >= 0 && s < COST_SCOPE__COUNT) ? scope_names[s] : "unknown";
}

static const char *const class_names[] = {"gemm", "elementwise", "embedding_fwd",
                                          "embedding_fwd_bwd"};
const char *cost_class_name(int c) {
  return (c >= 0 && c < COST_CLASS__COUNT) ? class_names[c] : "unknown";
}

void cost_result_clear(cost_result *r) { memset(r, 0, sizeof *r); }

void cost_term_add(cost_result *r, const char *name, double value) {
  if (r->n_terms >= COST_MAX_TERMS) return;
  cost_term *t = &r->terms[r->n_terms++];
  size_t n = strlen(name);
  if (n >= sizeof t->name) n = sizeof t->name - 1;
  memcpy(t->name, name, n);
  t->name[n] = '\0';
  t->value = value;
}

void cost_result_finish(cost_result *r, double seconds, int bound, double flops, double bytes) {
  r->ms = seconds * 1e3;
  r->bound = bound;
  r->flops = flops;
  r->bytes = bytes;
  r->achieved_flops_per_s = seconds > 0 ? flops / seconds : 0;
  r->achieved_bytes_per_s = seconds > 0 ? bytes / seconds : 0;
}
