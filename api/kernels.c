/* POST /v1/kernels/select and `cdplan kernels select`: rank Triton GEMM
 * tile configs per problem with the analytical model (costmodel/kernel.h)
 * instead of autotuning. Everything is decoded and checked first --
 * problems (sizes, a dtype the hardware has and Triton's tl.dot takes),
 * candidates (each field a power of two in range; num_stages 1..8) -- so
 * a bad entry fails the whole request with its JSON path (e.g.
 * "candidates[3].block_k"); then each problem is ranked over the same
 * candidate list. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/api_kernels.h"
#include "costmodel/kernel.h"

#define MAX_PROBLEMS 64
#define MAX_CANDIDATES 1024
#define DIM_MAX 16777216LL /* 2^24, as api/estimate.c */
#define TRITON_TOP 5       /* configs in the paste-ready autotune list */
/* Ranked plus infeasible entries in one reply, all problems together: a
 * 3 KB request (64 problems over the default space) once came back 180x
 * its size. Each problem gets an equal share (at least 32 entries); a cut
 * list says so with its full counts. */
#define REPLY_ENTRIES 2048

static const char *const top_fields[] = {"hardware",    "problems", "candidates",
                                         "calibration", "top",      NULL};
static const char *const problem_fields[] = {"m", "n", "k", "dtype", "layout", NULL};
static const char *const cand_fields[] = {"block_m",    "block_n", "block_k", "num_warps",
                                          "num_stages", "group_m", "split_k", NULL};

/* Dtypes Triton's tl.dot multiplies on tensor cores / matrix cores. */
static int kernel_dtype(int dt) {
  return dt == COST_DT_BF16 || dt == COST_DT_FP16 || dt == COST_DT_FP8 || dt == COST_DT_TF32 ||
         dt == COST_DT_FP32 || dt == COST_DT_INT8;
}

static int decode_problem(const cJSON *o, const char *p, const cost_hw *hw, cost_kproblem *out,
                          svc_err *err) {
  const char *dts = "bf16", *lay = "nn";
  char f[96];
  int rc;
  if (!cJSON_IsObject(o)) return svc_err_set(err, SVC_BAD_FIELD, p, "%s must be an object", p);
  if ((rc = api_check_fields(o, problem_fields, p, err)) ||
      (rc = api_get_str(o, "layout", p, 0, 2, NULL, &lay, err)) ||
      (rc = api_get_int(o, "m", p, 1, 1, DIM_MAX, &out->m, err)) ||
      (rc = api_get_int(o, "n", p, 1, 1, DIM_MAX, &out->n, err)) ||
      (rc = api_get_int(o, "k", p, 1, 1, DIM_MAX, &out->k, err)) ||
      (rc = api_get_str(o, "dtype", p, 0, 8, NULL, &dts, err)))
    return rc;
  int dt = cost_dtype_parse(dts);
  api_path(f, sizeof f, p, "dtype");
  if (dt < 0 || !kernel_dtype(dt))
    return svc_err_set(err, SVC_BAD_FIELD, f,
                       "%s: '%s' is not a kernel dtype (bf16, fp16, fp8, tf32, fp32, int8)", f,
                       dts);
  if (hw->peak_flops[dt] <= 0)
    return svc_err_set(err, SVC_UNSUPPORTED_DTYPE, f, "%s: %s has no %s support", f, hw->name, dts);
  out->dtype = dt;
  /* A then B: n row-major, t stored transposed (forward nt, dgrad nn, wgrad tn). */
  if (strlen(lay) != 2 || (lay[0] != 'n' && lay[0] != 't') || (lay[1] != 'n' && lay[1] != 't'))
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, p, "layout"),
                       "%s: '%s' is not a layout (nn, nt, tn, tt)", f, lay);
  memcpy(out->layout, lay, 3);
  return 0;
}

/* An integer field that must be a power of two in [lo, hi]. */
static int get_pow2(const cJSON *o, const char *key, const char *p, int required, int lo, int hi,
                    int *out, svc_err *err) {
  int64_t v = *out;
  char f[96];
  int rc = api_get_int(o, key, p, required, lo, hi, &v, err);
  if (rc) return rc;
  if (v & (v - 1))
    return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, p, key),
                       "%s must be a power of two (got %lld)", f, (long long)v);
  *out = (int)v;
  return 0;
}

static int decode_candidate(const cJSON *o, const char *p, cost_kcfg *c, svc_err *err) {
  int64_t stages = 3, split = 1;
  int rc;
  *c = (cost_kcfg){0, 0, 0, 4, 3, 8, 1};
  if (!cJSON_IsObject(o)) return svc_err_set(err, SVC_BAD_FIELD, p, "%s must be an object", p);
  if ((rc = api_check_fields(o, cand_fields, p, err)) ||
      (rc = get_pow2(o, "block_m", p, 1, COST_KBLOCK_MIN, COST_KBLOCK_MAX, &c->block_m, err)) ||
      (rc = get_pow2(o, "block_n", p, 1, COST_KBLOCK_MIN, COST_KBLOCK_MAX, &c->block_n, err)) ||
      (rc = get_pow2(o, "block_k", p, 1, COST_KBLOCK_MIN, COST_KBLOCK_MAX, &c->block_k, err)) ||
      (rc = get_pow2(o, "num_warps", p, 0, 1, COST_KWARPS_MAX, &c->num_warps, err)) ||
      (rc = api_get_int(o, "num_stages", p, 0, 1, COST_KSTAGES_MAX, &stages, err)) ||
      (rc = get_pow2(o, "group_m", p, 0, 1, COST_KGROUP_MAX, &c->group_m, err)) ||
      (rc = api_get_int(o, "split_k", p, 0, 1, COST_KSPLIT_MAX, &split, err)))
    return rc;
  c->num_stages = (int)stages;
  c->split_k = (int)split;
  return 0;
}

static void add_config(cJSON *o, const cost_kcfg *c) {
  cJSON_AddNumberToObject(o, "block_m", c->block_m);
  cJSON_AddNumberToObject(o, "block_n", c->block_n);
  cJSON_AddNumberToObject(o, "block_k", c->block_k);
  cJSON_AddNumberToObject(o, "num_warps", c->num_warps);
  cJSON_AddNumberToObject(o, "num_stages", c->num_stages);
  cJSON_AddNumberToObject(o, "group_m", c->group_m);
  if (c->split_k > 1) cJSON_AddNumberToObject(o, "split_k", c->split_k);
}

static cJSON *ranked_json(const cost_kpred *r) {
  cJSON *o = cJSON_CreateObject();
  add_config(o, &r->cfg);
  cJSON_AddNumberToObject(o, "ms", r->ms);
  cJSON_AddNumberToObject(o, "regs", r->regs);
  cJSON_AddNumberToObject(o, "occupancy", r->occupancy);
  cJSON_AddNumberToObject(o, "smem_bytes", r->smem);
  cJSON_AddNumberToObject(o, "waves", r->waves);
  cJSON_AddNumberToObject(o, "spill", r->spill);
  cJSON_AddNumberToObject(o, "family_factor", r->family);
  return o;
}

/* One triton.Config text, with the meta-parameter names of Triton's
 * matmul tutorial (python/tutorials/03-matrix-multiplication.py:
 * BLOCK_SIZE_M/N/K, GROUP_SIZE_M). On AMD GPUs the AMD backend's compile
 * options too (third_party/amd/backend/compiler.py, HIPOptions):
 *  - waves_per_eu: the occupancy the model predicts, as waves per SIMD
 *    (blocks per CU x num_warps / 4 SIMDs per CU, CDNA3 ISA guide 1.2), a
 *    hint the compiler then allocates registers for; at least 1.
 *  - matrix_instr_nonkdim: 16, the 16x16 MFMA, PyTorch Inductor's ROCm GEMM
 *    default (torch/_inductor/template_heuristics.py, ROCmGemmConfig).
 *  - kpack: 2 on gfx942 (Inductor's default), 1 elsewhere: HIPOptions
 *    overwrites any other value with 1 on gfx950 and warns that it is
 *    deprecated there. */
static int config_text(char *s, size_t cap, const cost_hw *hw, const cost_kpred *r) {
  const cost_kcfg *c = &r->cfg;
  int n = snprintf(s, cap,
                   "triton.Config({'BLOCK_SIZE_M': %d, 'BLOCK_SIZE_N': %d, 'BLOCK_SIZE_K': %d, "
                   "'GROUP_SIZE_M': %d",
                   c->block_m, c->block_n, c->block_k, c->group_m);
  if (n < 0 || (size_t)n >= cap) return -1;
  if (!strcmp(hw->vendor, "amd")) {
    int waves = r->occupancy * c->num_warps / 4;
    int m = snprintf(s + n, cap - (size_t)n,
                     ", 'waves_per_eu': %d, 'matrix_instr_nonkdim': 16, 'kpack': %d",
                     waves < 1 ? 1 : waves, strcmp(hw->arch, "cdna3") ? 1 : 2);
    if (m < 0 || (size_t)m >= cap - (size_t)n) return -1;
    n += m;
  }
  int m = snprintf(s + n, cap - (size_t)n, "}, num_warps=%d, num_stages=%d)", c->num_warps,
                   c->num_stages);
  return m < 0 || (size_t)m >= cap - (size_t)n ? -1 : n + m;
}

/* "[triton.Config(...), ...]" of the best n ranked configs, ready to paste
 * into @triton.autotune; with n = 1 and single, the one config alone. */
static char *triton_text(const cost_hw *hw, const cost_kpred *r, int n, int single) {
  size_t cap = 256 * (size_t)(n + 1), len = 0;
  char *s = malloc(cap);
  if (!s) return NULL;
  if (single) {
    if (n < 1 || config_text(s, cap, hw, &r[0]) < 0) s[0] = '\0';
    return s;
  }
  len += (size_t)snprintf(s + len, cap - len, "[");
  for (int i = 0; i < n; i++) {
    if (i) len += (size_t)snprintf(s + len, cap - len, ", ");
    int w = config_text(s + len, cap - len, hw, &r[i]);
    if (w < 0) {
      free(s);
      return NULL;
    }
    len += (size_t)w;
  }
  snprintf(s + len, cap - len, "]");
  return s;
}

static int problem_json(const cost_hw *hw, const cost_kproblem *pb, const cost_kcfg *cands, int n,
                        int top, int share, const char *p, cost_kpred *scratch, cJSON **out,
                        svc_err *err) {
  int nf = 0, rc = cost_kernel_rank(hw, pb, cands, n, scratch, &nf);
  cJSON *o, *ranked, *inf;
  char *tx;
  if (rc) /* validation let it through: our own invariant broke */
    return svc_err_set(err, SVC_INTERNAL, p, "%s: kernel model refused the problem (%d)", p, rc);
  o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "m", (double)pb->m);
  cJSON_AddNumberToObject(o, "n", (double)pb->n);
  cJSON_AddNumberToObject(o, "k", (double)pb->k);
  cJSON_AddStringToObject(o, "dtype", cost_dtype_name((cost_dtype)pb->dtype));
  if (nf)
    cJSON_AddItemToObject(o, "chosen", ranked_json(&scratch[0]));
  else
    cJSON_AddNullToObject(o, "chosen");
  int show = nf < top ? nf : top;
  if (show > share) show = share;
  int show_inf = n - nf < share - show ? n - nf : share - show;
  ranked = cJSON_AddArrayToObject(o, "ranked");
  for (int i = 0; i < show; i++) cJSON_AddItemToArray(ranked, ranked_json(&scratch[i]));
  inf = cJSON_AddArrayToObject(o, "infeasible");
  if (show < (nf < top ? nf : top) || show_inf < n - nf) {
    cJSON_AddBoolToObject(o, "truncated", 1);
    cJSON_AddNumberToObject(o, "feasible_count", nf);
    cJSON_AddNumberToObject(o, "infeasible_count", n - nf);
  }
  for (int i = nf; i < nf + show_inf; i++) {
    cJSON *x = cJSON_CreateObject();
    add_config(x, &scratch[i].cfg);
    cJSON_AddStringToObject(x, "reason", scratch[i].reason);
    cJSON_AddItemToArray(inf, x);
  }
  if (!(tx = triton_text(hw, scratch, nf < TRITON_TOP ? nf : TRITON_TOP, 0))) {
    cJSON_Delete(o);
    return svc_err_set(err, SVC_NOMEM, "", NULL);
  }
  cJSON_AddStringToObject(o, "triton", tx);
  free(tx);
  /* the chosen config alone: for a kernel launched without autotuning */
  if (!(tx = triton_text(hw, scratch, nf ? 1 : 0, 1))) {
    cJSON_Delete(o);
    return svc_err_set(err, SVC_NOMEM, "", NULL);
  }
  if (tx[0])
    cJSON_AddStringToObject(o, "triton_config", tx);
  else
    cJSON_AddNullToObject(o, "triton_config");
  free(tx);
  *out = o;
  return 0;
}

int api_kernels_select(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err) {
  cJSON *doc = NULL;
  int rc = api_kernels_select_doc(ctx, body, len, &doc, err);
  *out = NULL;
  if (!rc && !(*out = api_print(doc))) rc = svc_err_set(err, SVC_NOMEM, "", NULL);
  cJSON_Delete(doc);
  return rc;
}

int api_kernels_select_doc(api_ctx *ctx, const char *body, size_t len, cJSON **out, svc_err *err) {
  cJSON *req = NULL, *resp = NULL, *results;
  const char *hwname = NULL, *calib = "latest";
  cost_kproblem *probs = NULL;
  cost_kcfg *cands = NULL;
  cost_kpred *scratch = NULL;
  int64_t top = MAX_CANDIDATES;
  cost_hw hw;
  int rc, np = 0, nc = 0, i = 0;
  char p[48];
  *out = NULL;
  if ((rc = api_parse_request(ctx, body, len, &req, err))) return rc;
  if ((rc = api_check_fields(req, top_fields, "", err)) ||
      (rc = api_get_str(req, "hardware", "", 1, 63, NULL, &hwname, err)) ||
      (rc = api_get_str(req, "calibration", "", 0, 16, NULL, &calib, err)) ||
      (rc = api_get_int(req, "top", "", 0, 1, MAX_CANDIDATES, &top, err)))
    goto cleanup;
  if (strcmp(calib, "latest") != 0 && strcmp(calib, "none") != 0) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "calibration", "calibration must be latest or none");
    goto cleanup;
  }
  const cJSON *jp = cJSON_GetObjectItemCaseSensitive(req, "problems");
  const cJSON *jc = cJSON_GetObjectItemCaseSensitive(req, "candidates");
  if (!cJSON_IsArray(jp) || cJSON_GetArraySize(jp) < 1 || cJSON_GetArraySize(jp) > MAX_PROBLEMS) {
    rc = svc_err_set(err, jp ? SVC_BAD_FIELD : SVC_MISSING_FIELD, "problems",
                     "problems must be an array of 1 to %d problems", MAX_PROBLEMS);
    goto cleanup;
  }
  if (jc && (!cJSON_IsArray(jc) || cJSON_GetArraySize(jc) < 1 ||
             cJSON_GetArraySize(jc) > MAX_CANDIDATES)) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "candidates",
                     "candidates must be an array of 1 to %d configs", MAX_CANDIDATES);
    goto cleanup;
  }
  if ((rc = api_hw_lookup(ctx, hwname, !strcmp(calib, "latest"), &hw, err))) goto cleanup;
  if (cost_kernel_default_space(&hw, COST_DT_BF16, NULL, 0) < 0) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "hardware",
                     "%s (arch %s) has no kernel model: cdplan models Triton GEMMs on hopper, "
                     "blackwell, ampere and cdna2-4 with their compute units, clock, shared "
                     "memory and registers",
                     hw.name, hw.arch[0] ? hw.arch : "unknown");
    goto cleanup;
  }
  probs = calloc(MAX_PROBLEMS, sizeof *probs);
  cands = calloc(MAX_CANDIDATES, sizeof *cands);
  scratch = calloc(MAX_CANDIDATES, sizeof *scratch);
  if (!probs || !cands || !scratch) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  for (const cJSON *o = jp->child; o; o = o->next, np++) {
    snprintf(p, sizeof p, "problems[%d]", np);
    if ((rc = decode_problem(o, p, &hw, &probs[np], err))) goto cleanup;
  }
  for (const cJSON *o = jc ? jc->child : NULL; o; o = o->next, nc++) {
    snprintf(p, sizeof p, "candidates[%d]", nc);
    if ((rc = decode_candidate(o, p, &cands[nc], err))) goto cleanup;
  }
  resp = cJSON_CreateObject();
  cJSON_AddStringToObject(resp, "hardware", hw.name);
  cJSON_AddNumberToObject(resp, "calibration", hw.calib.version);
  results = cJSON_AddArrayToObject(resp, "results");
  for (i = 0; i < np; i++) {
    cJSON *r = NULL;
    int n = nc;
    snprintf(p, sizeof p, "problems[%d]", i);
    if (!jc) /* the default space depends on the problem's dtype */
      n = cost_kernel_default_space(&hw, probs[i].dtype, cands, MAX_CANDIDATES);
    if ((rc = problem_json(&hw, &probs[i], cands, n, (int)top, REPLY_ENTRIES / np, p, scratch, &r,
                           err)))
      goto cleanup;
    cJSON_AddItemToArray(results, r);
  }
  *out = resp;
  resp = NULL;
cleanup:
  cJSON_Delete(req);
  cJSON_Delete(resp);
  free(probs);
  free(cands);
  free(scratch);
  return rc;
}
