/* Kernel selection through the api and against data: the default space of
 * every catalog accelerator (data/hardware/NAME.json, decoded by
 * api_hw_decode) never yields a chosen infeasible config; the api's
 * validation names the field; a regression gate on the shared H200 sweep
 * (data/measurements/h200/triton_configs.json). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/common.h"
#include "api/api_int.h"
#include "api/api_kernels.h"
#include "bench/costmodel_load.h"
#include "bench/kernel_sweep.h"
#include "costmodel/kernel.h"

/* Top-1 efficiency and ranking on the fit set (the shared sweep plus the
 * h200-fit2, h200-fit3 and h200-fit4 sweeps, 60 shapes) must stay at
 * today's level: the shipped parameters with the family corrections reach
 * 0.973 geo-mean, 0.707 worst and Kendall tau 0.821 there (bench/
 * kernel_select, fit-all; the analytic terms alone 0.949 / 0.638 / 0.713);
 * the gates are those figures minus about 0.01-0.02, room for refits, not
 * for a fall back to the analytic-only figures or towards the fixed-config
 * baseline (0.49). */
#define FIT_TOP1_GEO_MIN 0.96
#define FIT_TOP1_WORST_MIN 0.69
#define FIT_TAU_MIN 0.80

/* Independent of the model's own bookkeeping: the limits a chosen config
 * must respect on hw. */
static void assert_launchable(const cost_hw *hw, const cost_kcfg *c, int dt) {
  int amd = !strncmp(hw->arch, "cdna", 4), warp = amd ? 64 : 32;
  double b = cost_dtype_bytes((cost_dtype)dt);
  /* mma.sync tiles (Ampere; Hopper below 64 rows or with warps not in
   * whole warpgroups) keep num_stages - 1 buffers like AMD's pipeliner
   * (the compiler's shared bytes, data/measurements/h200-compile/) */
  int sync = !amd && (!strcmp(hw->arch, "ampere") ||
                      (!strcmp(hw->arch, "hopper") && (c->block_m < 64 || c->num_warps % 4)));
  int bufs = amd || sync ? (c->num_stages > 2 ? c->num_stages - 1 : 1) : c->num_stages;
  double smem = ((double)c->block_m * c->block_k + (double)c->block_k * c->block_n) * b * bufs;
  int threads = c->num_warps * warp;
  double acc = (double)c->block_m * c->block_n / threads;
  assert_true(threads <= 1024);
  assert_true(smem <= hw->smem_per_unit);
  assert_true(acc < (amd ? 512 : 255));
  assert_true(acc * threads <= hw->regs_per_unit);
}

static void test_kernels_api__catalog_never_chooses_infeasible(void **state) {
  (void)state;
  static const int64_t shapes[][3] = {{4096, 4096, 4096}, {1, 4096, 4096}, {65536, 1024, 479},
                                      {333, 4097, 777},   {16, 16, 16},    {8192, 256, 65536}};
  static const int dts[] = {COST_DT_BF16, COST_DT_FP16, COST_DT_FP8, COST_DT_TF32, COST_DT_INT8};
  static cost_kcfg space[COST_KSPACE_MAX];
  static cost_kpred out[COST_KSPACE_MAX];
  char dir[512], path[1024];
  int modelled = 0;
  snprintf(dir, sizeof dir, "%s/data/hardware", CDPLAN_SOURCE_DIR);
  DIR *d = opendir(dir);
  assert_non_null(d);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t nl = strlen(e->d_name), len = 0;
    if (nl < 6 || strcmp(e->d_name + nl - 5, ".json")) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    char *text = cm_slurp(path, &len);
    assert_non_null(text);
    cJSON *doc = cJSON_ParseWithLength(text, len);
    cost_hw hw;
    svc_err err;
    assert_int_equal(api_hw_decode(doc, &hw, &err), 0);
    cJSON_Delete(doc);
    free(text);
    if (cost_kernel_default_space(&hw, COST_DT_BF16, space, 0) < 0) continue; /* e.g. a TPU */
    modelled++;
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
      if (hw.peak_flops[dts[t]] <= 0) continue;
      int n = cost_kernel_default_space(&hw, dts[t], space, COST_KSPACE_MAX);
      assert_true(n >= 32);
      for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        cost_kproblem p = {shapes[s][0], shapes[s][1], shapes[s][2], dts[t], "nn"};
        int nf = 0;
        assert_int_equal(cost_kernel_rank(&hw, &p, space, n, out, &nf), 0);
        if (nf < 1) fail_msg("%s %s: no feasible default config", hw.name, cost_dtype_name(dts[t]));
        assert_true(out[0].feasible);
        assert_true(isfinite(out[0].ms) && out[0].ms > 0);
        assert_launchable(&hw, &out[0].cfg, dts[t]);
        for (int i = 0; i < n; i++) assert_int_equal(out[i].feasible, i < nf);
      }
    }
  }
  closedir(d);
  assert_true(modelled >= 10);
}

static api_ctx *open_ctx(void) {
  api_ctx *ctx = NULL;
  svc_err err;
  if (api_ctx_new(&ctx, ":memory:", &err)) fail_msg("%s", err.message);
  return ctx;
}

static void expect_field(api_ctx *ctx, const char *body, int code, const char *field) {
  char *out = NULL;
  svc_err err;
  svc_err_clear(&err);
  int rc = api_kernels_select(ctx, body, strlen(body), &out, &err);
  if (rc == 0) fail_msg("accepted: %s", body);
  assert_int_equal(err.code, code);
  assert_string_equal(err.field, field);
  assert_null(out);
}

static void test_kernels_api__validation_names_the_field(void **state) {
  (void)state;
  api_ctx *ctx = open_ctx();
  const char *p = "\"problems\":[{\"m\":64,\"n\":64,\"k\":64}]";
  char body[8192];
  snprintf(
      body, sizeof body,
      "{\"hardware\":\"h200\",%s,\"candidates\":[{\"block_m\":64,\"block_n\":64,\"block_k\":32},"
      "{\"block_m\":64,\"block_n\":64,\"block_k\":48}]}",
      p);
  expect_field(ctx, body, SVC_BAD_FIELD, "candidates[1].block_k");
  snprintf(
      body, sizeof body,
      "{\"hardware\":\"h200\",%s,\"candidates\":[{\"block_m\":512,\"block_n\":64,\"block_k\":32}]}",
      p);
  expect_field(ctx, body, SVC_OUT_OF_RANGE, "candidates[0].block_m");
  snprintf(
      body, sizeof body,
      "{\"hardware\":\"h200\",%s,\"candidates\":[{\"block_m\":64,\"block_n\":64,\"block_k\":32,"
      "\"num_stages\":9}]}",
      p);
  expect_field(ctx, body, SVC_OUT_OF_RANGE, "candidates[0].num_stages");
  snprintf(
      body, sizeof body,
      "{\"hardware\":\"h200\",%s,\"candidates\":[{\"block_m\":64,\"block_n\":64,\"block_k\":32,"
      "\"warps\":4}]}",
      p);
  expect_field(ctx, body, SVC_UNKNOWN_FIELD, "candidates[0].warps");
  expect_field(ctx,
               "{\"hardware\":\"h200\",\"problems\":[{\"m\":64,\"n\":64,\"k\":64},{\"m\":0,\"n\":1,"
               "\"k\":1}]}",
               SVC_OUT_OF_RANGE, "problems[1].m");
  expect_field(
      ctx, "{\"hardware\":\"h200\",\"problems\":[{\"m\":64,\"n\":64,\"k\":64,\"dtype\":\"fp64\"}]}",
      SVC_BAD_FIELD, "problems[0].dtype");
  /* Issue 25: layout and split_k are checked and named. */
  expect_field(
      ctx, "{\"hardware\":\"h200\",\"problems\":[{\"m\":64,\"n\":64,\"k\":64,\"layout\":\"tx\"}]}",
      SVC_BAD_FIELD, "problems[0].layout");
  expect_field(ctx,
               "{\"hardware\":\"h200\",\"problems\":[{\"m\":64,\"n\":64,\"k\":64}],"
               "\"candidates\":[{\"block_m\":64,\"block_n\":64,\"block_k\":32,\"split_k\":65}]}",
               SVC_OUT_OF_RANGE, "candidates[0].split_k");
  expect_field(
      ctx,
      "{\"hardware\":\"mi300x\",\"problems\":[{\"m\":64,\"n\":64,\"k\":64,\"dtype\":\"fp4\"}]}",
      SVC_BAD_FIELD, "problems[0].dtype");
  expect_field(ctx,
               "{\"hardware\":\"a100-80gb-sxm\",\"problems\":[{\"m\":64,\"n\":64,\"k\":64,"
               "\"dtype\":\"fp8\"}]}",
               SVC_UNSUPPORTED_DTYPE, "problems[0].dtype");
  expect_field(ctx, "{\"hardware\":\"h200\",\"problems\":[]}", SVC_BAD_FIELD, "problems");
  expect_field(ctx, "{\"hardware\":\"h200\"}", SVC_MISSING_FIELD, "problems");
  expect_field(ctx, "{\"hardware\":\"tpu-v5p\",\"problems\":[{\"m\":64,\"n\":64,\"k\":64}]}",
               SVC_BAD_FIELD, "hardware");
  expect_field(ctx, "{\"hardware\":\"nope\",\"problems\":[{\"m\":64,\"n\":64,\"k\":64}]}",
               SVC_NOT_FOUND, "hardware");
  /* 65 problems, 1025 candidates */
  size_t n = (size_t)snprintf(body, sizeof body, "{\"hardware\":\"h200\",\"problems\":[");
  for (int i = 0; i < 65; i++)
    n += (size_t)snprintf(body + n, sizeof body - n, "%s{\"m\":8,\"n\":8,\"k\":8}", i ? "," : "");
  snprintf(body + n, sizeof body - n, "]}");
  expect_field(ctx, body, SVC_BAD_FIELD, "problems");
  char *big = malloc(80000);
  n = (size_t)snprintf(big, 80000, "{\"hardware\":\"h200\",%s,\"candidates\":[", p);
  for (int i = 0; i < 1025; i++)
    n += (size_t)snprintf(big + n, 80000 - n, "%s{\"block_m\":64,\"block_n\":64,\"block_k\":32}",
                          i ? "," : "");
  snprintf(big + n, 80000 - n, "]}");
  expect_field(ctx, big, SVC_BAD_FIELD, "candidates");
  free(big);
  api_ctx_free(ctx);
}

static void test_kernels_api__response_shape(void **state) {
  (void)state;
  api_ctx *ctx = open_ctx();
  const char *body =
      "{\"hardware\":\"h200\",\"problems\":[{\"m\":4096,\"n\":4096,\"k\":4096,\"dtype\":\"bf16\"},"
      "{\"m\":2048,\"n\":1000,\"k\":479,\"dtype\":\"fp16\"}],\"candidates\":["
      "{\"block_m\":128,\"block_n\":256,\"block_k\":64,\"num_warps\":8,\"num_stages\":3},"
      "{\"block_m\":64,\"block_n\":64,\"block_k\":32},"
      "{\"block_m\":128,\"block_n\":128,\"block_k\":128,\"num_stages\":4}]}";
  char *out = NULL;
  svc_err err;
  if (api_kernels_select(ctx, body, strlen(body), &out, &err)) fail_msg("%s", err.message);
  cJSON *doc = cJSON_Parse(out);
  const cJSON *res = cJSON_GetObjectItem(doc, "results");
  assert_string_equal(cJSON_GetObjectItem(doc, "hardware")->valuestring, "h200");
  assert_int_equal(cJSON_GetArraySize(res), 2);
  const cJSON *r0 = cJSON_GetArrayItem(res, 0);
  const cJSON *chosen = cJSON_GetObjectItem(r0, "chosen");
  assert_int_equal(cJSON_GetObjectItem(chosen, "block_n")->valueint, 256);
  assert_true(cJSON_GetObjectItem(chosen, "ms")->valuedouble > 0);
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r0, "ranked")), 2);
  const cJSON *inf = cJSON_GetArrayItem(cJSON_GetObjectItem(r0, "infeasible"), 0);
  assert_non_null(
      strstr(cJSON_GetObjectItem(inf, "reason")->valuestring, "shared memory: 4 stages"));
  const char *tx = cJSON_GetObjectItem(r0, "triton")->valuestring;
  assert_non_null(strstr(tx, "[triton.Config({'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 256, "
                             "'BLOCK_SIZE_K': 64, 'GROUP_SIZE_M': 8}, num_warps=8, num_stages=3), "
                             "triton.Config("));
  assert_string_equal(cJSON_GetObjectItem(r0, "triton_config")->valuestring,
                      "triton.Config({'BLOCK_SIZE_M': 128, 'BLOCK_SIZE_N': 256, 'BLOCK_SIZE_K': "
                      "64, 'GROUP_SIZE_M': 8}, num_warps=8, num_stages=3)");
  assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(res, 1), "dtype")->valuestring,
                      "fp16");
  cJSON_Delete(doc);
  free(out);
  /* Default space when candidates are absent. */
  body = "{\"hardware\":\"mi300x\",\"problems\":[{\"m\":8192,\"n\":8192,\"k\":8192}],\"top\":3}";
  if (api_kernels_select(ctx, body, strlen(body), &out, &err)) fail_msg("%s", err.message);
  doc = cJSON_Parse(out);
  r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "results"), 0);
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r0, "ranked")), 3);
  assert_true(cJSON_IsObject(cJSON_GetObjectItem(r0, "chosen")));
  cJSON_Delete(doc);
  free(out);
  api_ctx_free(ctx);
}

static void test_kernels_api__fit_set_regression(void **state) {
  (void)state;
  const char *files[] = {"h200", "h200-fit2", "h200-fit3", "h200-fit4"};
  char path[1024];
  cost_hw hw;
  ks_shape *all = NULL;
  int n = 0;
  ks_score s;
  snprintf(path, sizeof path, "%s/data/hardware/h200.json", CDPLAN_SOURCE_DIR);
  assert_int_equal(ks_load_hw(path, &hw), 0);
  for (int f = 0; f < 4; f++) {
    ks_shape *sh = NULL;
    int k = 0;
    assert_int_equal(ks_load_set(CDPLAN_SOURCE_DIR, files[f], 0, &sh, &k), 0);
    ks_shape *grown = realloc(all, (size_t)(n + k) * sizeof *all);
    assert_non_null(grown);
    all = grown;
    memcpy(all + n, sh, (size_t)k * sizeof *all);
    n += k;
    free(sh);
  }
  assert_true(n >= 60);
  s.effs = NULL;
  ks_evaluate(&hw, NULL, NULL, -1, all, n, &s);
  free(all);
  print_message(
      "fit set (%d shapes): top-1 geo %.3f worst %.3f tau %.3f (fixed 128x128x64: %.3f)\n", n,
      s.eff_geo, s.eff_min, s.tau_mean, s.base_geo);
  assert_true(s.eff_geo >= FIT_TOP1_GEO_MIN);
  assert_true(s.eff_min >= FIT_TOP1_WORST_MIN);
  assert_true(s.tau_mean >= FIT_TAU_MIN);
  assert_true(s.eff_geo > s.base_geo);
}

/* Ground truth for feasibility: every config Triton refused to compile on
 * the H200 (OutOfResources: shared memory), in every sweep of the
 * repository, bf16/fp16/fp8/tf32, aligned or not, must be infeasible in the
 * model, and all but one for shared memory (see below). (4-byte operands with K or
 * N not a multiple of 16 are still copied with 4-byte cp.async and
 * multi-buffered: Triton's "Required" bytes on h200-dtypes say so.) */
static int sweep_dtype(const char *s) {
  return !strcmp(s, "fp8")    ? COST_DT_FP8
         : !strcmp(s, "tf32") ? COST_DT_TF32
         : !strcmp(s, "fp16") ? COST_DT_FP16
                              : COST_DT_BF16;
}

static int cfg_int(const cJSON *c, const char *k) {
  return (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, k));
}

static void test_kernels_api__compile_failures_are_infeasible(void **state) {
  (void)state;
  const char *sets[] = {"h200",
                        "h200-fit2",
                        "h200-fit3",
                        "h200-fit4",
                        "h200-extra",
                        "h200-heldout2",
                        "h200-heldout3",
                        "h200-dtypes",
                        "h200-dtypes-fit",
                        "h200-dtypes-held",
                        "h200-heldout4",
                        "h200-dtypes-held2",
                        "h200-dtypes-held3",
                        "h200-heldout5",
                        "h200-dtypes-held4",
                        "h200-awkward/fit_kernel_16bit.json",
                        "h200-awkward/fit_kernel_tf32.json",
                        "h200-awkward/fit_kernel_fp8.json",
                        "h200-awkward/blind_kernel_16bit.json",
                        "h200-awkward/blind_kernel_tf32.json",
                        "h200-awkward/blind_kernel_fp8.json"};
  char path[1024];
  cost_hw hw;
  int checked = 0, tf32_checked = 0, smem_reason = 0;
  snprintf(path, sizeof path, "%s/data/hardware/h200.json", CDPLAN_SOURCE_DIR);
  assert_int_equal(ks_load_hw(path, &hw), 0);
  for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
    size_t len = 0;
    /* a sweep folder's triton_configs.json, or a named file (h200-awkward) */
    snprintf(path, sizeof path, "%s/data/measurements/%s%s", CDPLAN_SOURCE_DIR, sets[s],
             strstr(sets[s], ".json") ? "" : "/triton_configs.json");
    char *text = cm_slurp(path, &len);
    assert_non_null(text);
    cJSON *doc = cJSON_Parse(text), *rows, *r;
    free(text);
    assert_non_null(doc);
    rows = cJSON_IsArray(doc) ? doc : cJSON_GetObjectItemCaseSensitive(doc, "rows");
    cJSON_ArrayForEach(r, rows) {
      const cJSON *f;
      cost_kproblem p = {cfg_int(r, "m"), cfg_int(r, "n"), cfg_int(r, "k"),
                         sweep_dtype(cJSON_GetStringValue(cJSON_GetObjectItem(r, "dtype"))), "nn"};
      const char *lay = cJSON_GetStringValue(cJSON_GetObjectItem(r, "layout"));
      if (lay && strlen(lay) == 2) memcpy(p.layout, lay, 3);
      cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(r, "failed")) {
        const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(f, "reason"));
        if (!why || strncmp(why, "OutOfResources: out of resource: shared memory", 46)) continue;
        cost_kcfg c = {cfg_int(f, "bm"),
                       cfg_int(f, "bn"),
                       cfg_int(f, "bk"),
                       cfg_int(f, "warps"),
                       cfg_int(f, "stages"),
                       cfg_int(f, "group_m"),
                       cJSON_IsNumber(cJSON_GetObjectItem(f, "split_k")) ? cfg_int(f, "split_k")
                                                                         : 1};
        cost_kpred o;
        assert_int_equal(cost_kernel_predict(&hw, &p, &c, &o), 0);
        if (o.feasible)
          print_message("%s: %lldx%lldx%lld %dx%dx%d s%d compiled out of shared memory, model "
                        "says feasible\n",
                        sets[s], (long long)p.m, (long long)p.n, (long long)p.k, c.block_m,
                        c.block_n, c.block_k, c.num_stages);
        assert_false(o.feasible);
        if (strstr(o.reason, "shared memory")) smem_reason++;
        checked++;
        if (p.dtype == COST_DT_TF32 && (p.k % 16 || p.n % 16)) tf32_checked++;
      }
    }
    cJSON_Delete(doc);
  }
  print_message("%d compile failures checked (%d tf32 with K or N not a multiple of 16)\n", checked,
                tf32_checked);
  assert_true(checked > 2000);
  assert_true(tf32_checked > 0);
}

/* The compiler's own account of every default-space config (data/
 * measurements/h200-compile/, validate/gpu/compile_info.py: Triton 3.6 on
 * the H200, bf16/tf32 in four alignment classes and fp8): every config it
 * refused is infeasible in the model; the configs it compiled that the
 * model rules out are exactly those whose accumulator alone passes the
 * register limit; the model's shared memory per block equals the
 * compiler's for at least 96 % of them (778 of 801 today: the misses are
 * epilogue scratch when N is unaligned or the tile is small), and model and
 * compiler agree on spilling for at least 75 % of the compiled ones (489
 * of 613 today). The mma.sync buffer rule and the fp8 register rule were
 * made from this file; without them 746 and 454. */
static void test_kernels_api__compiler_facts(void **state) {
  (void)state;
  char path[1024];
  cost_hw hw;
  ks_cc_score cc;
  snprintf(path, sizeof path, "%s/data/hardware/h200.json", CDPLAN_SOURCE_DIR);
  assert_int_equal(ks_load_hw(path, &hw), 0);
  snprintf(path, sizeof path, "%s/data/measurements/h200-compile/compile_info.json",
           CDPLAN_SOURCE_DIR);
  assert_int_equal(ks_compile_check(&hw, path, 0, &cc), 0);
  print_message("compile facts: %d configs, %d compiled; shared memory exact %d of %d; spill "
                "agrees %d; refused but feasible %d; accumulator rule %d of %d ruled out\n",
                cc.n, cc.compiled, cc.smem_exact, cc.smem_n, cc.spill_agree, cc.refused_feasible,
                cc.compiled_reg_rule, cc.feasible_wrong);
  assert_true(cc.n >= 800);
  assert_int_equal(cc.refused_feasible, 0);
  assert_int_equal(cc.compiled_reg_rule, cc.feasible_wrong);
  assert_true(cc.smem_exact >= 0.96 * cc.smem_n);
  assert_true(cc.spill_agree >= 0.75 * cc.compiled);
}

/* 64 small problems over the default space: the reply stays bounded (each
 * problem's share of the entries, the cut said with the full counts), the
 * best configs are still there, and a single problem is not cut. */
static void test_kernels_api__reply_size_is_bounded(void **state) {
  (void)state;
  api_ctx *ctx = open_ctx();
  char body[8192];
  size_t o = (size_t)snprintf(body, sizeof body, "{\"hardware\":\"h200\",\"problems\":[");
  for (int i = 0; i < 64; i++)
    o += (size_t)snprintf(body + o, sizeof body - o, "%s{\"m\":%d,\"n\":512,\"k\":512}",
                          i ? "," : "", 512 + 64 * i);
  snprintf(body + o, sizeof body - o, "]}");
  char *out = NULL;
  svc_err err;
  if (api_kernels_select(ctx, body, strlen(body), &out, &err)) fail_msg("%s", err.message);
  cJSON *doc = cJSON_Parse(out);
  const cJSON *r;
  int entries = 0;
  cJSON_ArrayForEach(r, cJSON_GetObjectItem(doc, "results")) {
    int nr = cJSON_GetArraySize(cJSON_GetObjectItem(r, "ranked"));
    int ni = cJSON_GetArraySize(cJSON_GetObjectItem(r, "infeasible"));
    assert_true(nr + ni <= 2048 / 64);
    assert_true(nr >= 1);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "truncated")));
    assert_true(cJSON_GetObjectItem(r, "feasible_count")->valueint +
                    cJSON_GetObjectItem(r, "infeasible_count")->valueint >
                nr + ni);
    entries += nr + ni;
  }
  assert_true(entries <= 2048);
  fprintf(stderr, "request %zu bytes, reply %zu bytes\n", strlen(body), strlen(out));
  assert_true(strlen(out) < 768 * 1024);
  cJSON_Delete(doc);
  free(out);
  const char *one = "{\"hardware\":\"h200\",\"problems\":[{\"m\":4096,\"n\":4096,\"k\":4096}]}";
  if (api_kernels_select(ctx, one, strlen(one), &out, &err)) fail_msg("%s", err.message);
  doc = cJSON_Parse(out);
  r = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "results"), 0);
  assert_null(cJSON_GetObjectItem(r, "truncated"));
  cJSON_Delete(doc);
  free(out);
  api_ctx_free(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kernels_api__catalog_never_chooses_infeasible),
      cmocka_unit_test(test_kernels_api__validation_names_the_field),
      cmocka_unit_test(test_kernels_api__response_shape),
      cmocka_unit_test(test_kernels_api__fit_set_regression),
      cmocka_unit_test(test_kernels_api__reply_size_is_bounded),
      cmocka_unit_test(test_kernels_api__compile_failures_are_infeasible),
      cmocka_unit_test(test_kernels_api__compiler_facts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
