/* The api context: the database handle, seeding a new database with the
 * compiled-in catalog, and a cache of decoded descriptors so that pricing
 * an op does not parse JSON or touch SQLite on the hot path. The cache is
 * keyed by hwdb's write generation: any catalog or calibration write makes
 * every entry stale. */
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

#define CACHE_SLOTS 64

typedef struct api_hw_cache {
  uint64_t generation;
  int used;
  struct {
    int calibrated;
    cost_hw hw;
  } slot[CACHE_SLOTS];
} api_hw_cache;

const char *api_version(void) { return CDPLAN_VERSION; }

/* The calibrations fitted to the committed measurements
 * (data/calibration/, written by data/calibration/generate.sh from the
 * reports of `cdplan calibrate`; tests/calibration_shipped checks that
 * regenerating them gives the same figures): a report with "hardware"
 * and "params" is that accelerator's version 1; one with "architectures"
 * gives each listed arch its version 1. */
static int seed_one(api_ctx *ctx, const char *arch, const char *hw, const cJSON *params,
                    const char *report, svc_err *err) {
  char *text = cJSON_IsObject(params) ? api_print(params) : NULL;
  int rc;
  if (!text) return svc_err_set(err, SVC_INTERNAL, "", "shipped calibration without params");
  rc = arch ? hwdb_arch_calib_add(ctx->db, arch, text, report, NULL, err)
            : hwdb_calib_add(ctx->db, hw, text, report, NULL, err);
  free(text);
  return rc;
}

static int seed_calibrations(api_ctx *ctx, svc_err *err) {
  int rc = 0;
  for (size_t i = 0; !rc && api_calibration_files[i].name; i++) {
    const embed_file *f = &api_calibration_files[i];
    cJSON *doc = cJSON_ParseWithLength(f->text, f->len), *a;
    const char *hw = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "hardware"));
    const cJSON *archs = cJSON_GetObjectItemCaseSensitive(doc, "architectures");
    if (hw) {
      rc = seed_one(ctx, NULL, hw, cJSON_GetObjectItemCaseSensitive(doc, "params"), f->text, err);
    } else if (cJSON_IsArray(archs)) {
      cJSON_ArrayForEach(a, archs) {
        const char *arch = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "arch"));
        char *rep = api_print(a);
        rc = arch && rep ? seed_one(ctx, arch, NULL, cJSON_GetObjectItemCaseSensitive(a, "params"),
                                    rep, err)
                         : svc_err_set(err, SVC_INTERNAL, "", "shipped calibration %s", f->name);
        free(rep);
        if (rc) break;
      }
    } else {
      rc = svc_err_set(err, SVC_INTERNAL, "", "shipped calibration %s is unreadable", f->name);
    }
    cJSON_Delete(doc);
  }
  return rc;
}

static int seed(api_ctx *ctx, svc_err *err) {
  size_t n = 0;
  while (api_catalog_files[n].name) n++;
  const char **texts = calloc(n + 1, sizeof *texts), **labels = calloc(n + 1, sizeof *labels);
  size_t *lens = calloc(n + 1, sizeof *lens);
  int rc = 0;
  if (!texts || !labels || !lens) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  for (size_t i = 0; i < n; i++) {
    texts[i] = api_catalog_files[i].text;
    lens[i] = api_catalog_files[i].len;
    labels[i] = api_catalog_files[i].name;
  }
  if ((rc = api_hw_store_many(ctx, n, texts, lens, labels, NULL, err))) {
    /* The compiled-in catalog is ours: a bad file is our bug, not the user's. */
    err->code = SVC_INTERNAL;
    goto cleanup;
  }
  if ((rc = seed_calibrations(ctx, err))) {
    err->code = SVC_INTERNAL;
    goto cleanup;
  }
  svc_log(SVC_LOG_INFO, "seeded a new database with %zu hardware descriptors", n);
cleanup:
  free(texts);
  free(labels);
  free(lens);
  return rc;
}

int api_ctx_new(api_ctx **out, const char *db_path, svc_err *err) {
  api_ctx *ctx = calloc(1, sizeof *ctx);
  int created = 0, rc;
  *out = NULL;
  if (!ctx) return svc_err_set(err, SVC_NOMEM, "", NULL);
  pthread_mutex_init(&ctx->cache_lock, NULL);
  if (!(ctx->cache = calloc(1, sizeof *ctx->cache))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto fail;
  }
  if ((rc = hwdb_open(&ctx->db, db_path, &created, err))) goto fail;
  if (created && (rc = seed(ctx, err))) goto fail;
  *out = ctx;
  return 0;
fail:
  api_ctx_free(ctx);
  return rc;
}

void api_ctx_set_hardware(api_ctx *ctx, const char *name) { ctx->hw_override = name; }

void api_ctx_free(api_ctx *ctx) {
  if (!ctx) return;
  hwdb_free(ctx->db);
  free(ctx->cache);
  pthread_mutex_destroy(&ctx->cache_lock);
  free(ctx);
}

void api_cache_invalidate(api_ctx *ctx) {
  pthread_mutex_lock(&ctx->cache_lock);
  ctx->cache->used = 0;
  pthread_mutex_unlock(&ctx->cache_lock);
}

/* Calibration parameters are stored as {"name": value, ...}. */
static int decode_calib(const char *params, int version, cost_calib *out) {
  cJSON *doc = cJSON_Parse(params);
  if (!cJSON_IsObject(doc)) {
    cJSON_Delete(doc);
    return -1;
  }
  memset(out, 0, sizeof *out);
  out->version = version;
  for (const cJSON *it = doc->child; it && out->n < COST_MAX_CALIB; it = it->next) {
    if (!cJSON_IsNumber(it)) continue;
    svc_strlcpy(out->names[out->n], it->string, sizeof out->names[0]);
    out->values[out->n++] = it->valuedouble;
  }
  cJSON_Delete(doc);
  return 0;
}

static int load(api_ctx *ctx, const char *name, int calibrated, cost_hw *hw, svc_err *err);

/* The terms published GEMM rows cannot fit -- the memory path, embedding
 * gathers, PyTorch's sparse embedding backward, the eager step's per-op and
 * sort costs -- describe the architecture's memory system and the software
 * stack on it, not one card's datasheet: an accelerator priced by its
 * architecture's calibration takes them from the shipped calibration of a
 * measured accelerator of the same architecture (Hopper: h200.json, fitted
 * on data/measurements/h200). Checked on an H100 SXM the model was never
 * fitted on: data/measurements/h100-check/ (its README has the figures).
 * The GEMM-structure terms too (tile fill, K step, epilogue drain, the
 * one-warpgroup rate, memory-bound GEMMs' bandwidth fraction, the
 * unaligned-operand element rate, and the rate of the mma.sync tf32
 * kernels cuBLAS runs for small and unaligned tf32 GEMMs): the same die
 * runs the same cuBLAS kernels; data/measurements/h100-inherit/ has the
 * before/after. */
static const char *const inherited_prefix[] = {"stream_eff",
                                               "mem_overlap_p",
                                               "ew_alu_scale",
                                               "dram_latency_ns",
                                               "gather_",
                                               "emb_",
                                               "sparse_bwd_",
                                               "step_",
                                               "gemm_epilogue_drain",
                                               "gemm_mem_eff",
                                               "gemm_wg1_eff",
                                               "kstep_ns",
                                               "tile_fill_us",
                                               "unaligned_elems_per_clk",
                                               "gemm_eff_tf32_mma_sync"};

static int inheritable(const char *name) {
  for (size_t i = 0; i < sizeof inherited_prefix / sizeof inherited_prefix[0]; i++)
    if (!strncmp(name, inherited_prefix[i], strlen(inherited_prefix[i]))) return 1;
  return 0;
}

static void inherit_measured(api_ctx *ctx, const char *arch, cost_hw *hw) {
  for (size_t i = 0; api_calibration_files[i].name; i++) {
    const embed_file *f = &api_calibration_files[i];
    cJSON *doc = cJSON_ParseWithLength(f->text, f->len);
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(doc, "hardware"));
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(doc, "params"), *it;
    cost_hw dev;
    int same_arch = name && cJSON_IsObject(params) && !load(ctx, name, 0, &dev, NULL) &&
                    !strcmp(dev.arch, arch);
    if (same_arch) {
      cJSON_ArrayForEach(it, params) {
        if (hw->calib.n >= COST_MAX_CALIB) break;
        if (!cJSON_IsNumber(it) || !inheritable(it->string) ||
            cost_calib_has(&hw->calib, it->string))
          continue;
        svc_strlcpy(hw->calib.names[hw->calib.n], it->string, sizeof hw->calib.names[0]);
        hw->calib.values[hw->calib.n++] = it->valuedouble;
      }
      svc_strlcpy(hw->calib.inherited_from, name, sizeof hw->calib.inherited_from);
    }
    cJSON_Delete(doc);
    if (same_arch) return;
  }
}

/* No calibration of its own: its architecture's, fitted to published
 * measurements (api/calibrate_published.c), with the parameters that fit
 * lacks from the arch it falls back to (cost_calib_fill), else the
 * fallback's alone (cost_arch_fallback: per_arch 2); then the measured
 * terms above. */
static void arch_calib(api_ctx *ctx, cost_hw *hw) {
  hwdb_calib c;
  const char *arch = hw->arch;
  for (int step = 1; step <= 2 && arch && arch[0]; step++, arch = cost_arch_fallback(hw->arch)) {
    if (hwdb_arch_calib_latest(ctx->db, arch, &c, NULL)) continue;
    if (decode_calib(c.params, c.version, &hw->calib))
      svc_log(SVC_LOG_WARN, "arch calibration %d of %s is unreadable; using datasheet figures",
              c.version, arch);
    else {
      hw->calib.per_arch = step;
      /* The arch's own fit, its unfitted parameters from the fallback's. */
      const char *fb = step == 1 ? cost_arch_fallback(hw->arch) : NULL;
      hwdb_calib b;
      cost_calib base;
      if (fb && !hwdb_arch_calib_latest(ctx->db, fb, &b, NULL)) {
        if (!decode_calib(b.params, b.version, &base)) cost_calib_fill(&hw->calib, &base);
        hwdb_calib_dispose(&b);
      }
      inherit_measured(ctx, arch, hw);
    }
    hwdb_calib_dispose(&c);
    return;
  }
}

static int load(api_ctx *ctx, const char *name, int calibrated, cost_hw *hw, svc_err *err) {
  hwdb_hw row;
  hwdb_calib c;
  int rc = hwdb_hw_get(ctx->db, name, &row, err);
  if (rc) return rc;
  cJSON *doc = cJSON_Parse(row.doc);
  hwdb_hw_dispose(&row);
  if (!doc) return svc_err_set(err, SVC_INTERNAL, "", "stored descriptor of '%s' is corrupt", name);
  rc = api_hw_decode(doc, hw, err);
  cJSON_Delete(doc);
  if (rc) return rc;
  if (!calibrated) return 0;
  if (hwdb_calib_latest(ctx->db, name, &c, NULL) == 0) {
    if (decode_calib(c.params, c.version, &hw->calib))
      svc_log(SVC_LOG_WARN, "calibration %d of %s is unreadable; using datasheet figures",
              c.version, name);
    hwdb_calib_dispose(&c);
    /* Only a machine's host figures (cdplan calibrate --host-probe): priced
     * by its architecture as before, those figures on top. */
    if (api_calib_host_only(&hw->calib)) {
      cost_calib host = hw->calib;
      memset(&hw->calib, 0, sizeof hw->calib);
      arch_calib(ctx, hw);
      if (api_calib_host_merge(&hw->calib, &host))
        svc_log(SVC_LOG_WARN, "calibration of %s is full: its host figures are not used", name);
    }
  } else {
    arch_calib(ctx, hw);
  }
  return 0;
}

int api_hw_lookup(api_ctx *ctx, const char *name, int use_calibration, cost_hw *out, svc_err *err) {
  api_hw_cache *cache = ctx->cache;
  int calibrated = use_calibration != 0, rc;
  if (!api_valid_name(name))
    return svc_err_set(err, SVC_NOT_FOUND, "hardware", "unknown hardware '%.63s'",
                       name ? name : "");
  uint64_t gen = hwdb_generation(ctx->db);
  pthread_mutex_lock(&ctx->cache_lock);
  if (cache->generation != gen) {
    cache->used = 0;
    cache->generation = gen;
  }
  for (int i = 0; i < cache->used; i++) {
    if (cache->slot[i].calibrated == calibrated && !strcmp(cache->slot[i].hw.name, name)) {
      *out = cache->slot[i].hw;
      pthread_mutex_unlock(&ctx->cache_lock);
      return 0;
    }
  }
  pthread_mutex_unlock(&ctx->cache_lock);
  if ((rc = load(ctx, name, calibrated, out, err))) {
    if (rc == -SVC_NOT_FOUND)
      svc_err_set(err, SVC_NOT_FOUND, "hardware", "unknown hardware '%s'", name);
    return rc;
  }
  pthread_mutex_lock(&ctx->cache_lock);
  if (cache->generation == gen && cache->used < CACHE_SLOTS) {
    cache->slot[cache->used].calibrated = calibrated;
    cache->slot[cache->used].hw = *out;
    cache->used++;
  }
  pthread_mutex_unlock(&ctx->cache_lock);
  return 0;
}

int api_calib_level(const cost_hw *hw) {
  if (!(hw->calib.version > 0)) return API_CALIB_DATASHEET;
  return hw->calib.per_arch ? API_CALIB_ARCH : API_CALIB_OWN;
}

int api_hw_lookup_level(api_ctx *ctx, const char *name, int level, cost_hw *out, svc_err *err) {
  int rc = api_hw_lookup(ctx, name, level >= API_CALIB_OWN, out, err);
  /* Its architecture's published-data calibration, never its own. */
  if (!rc && level == API_CALIB_ARCH) arch_calib(ctx, out);
  return rc;
}

/* A calibration's parameters as the JSON object hwdb stores. */
static char *calib_params_text(const cost_calib *calib) {
  cJSON *params = cJSON_CreateObject();
  for (int i = 0; i < calib->n; i++)
    cJSON_AddNumberToObject(params, calib->names[i], calib->values[i]);
  char *text = api_print(params);
  cJSON_Delete(params);
  return text;
}

int api_calib_store(api_ctx *ctx, const char *hw, const cost_calib *calib, const char *report_json,
                    int *version, svc_err *err) {
  char *text = calib_params_text(calib);
  if (!text) return svc_err_set(err, SVC_NOMEM, "", NULL);
  int rc = hwdb_calib_add(ctx->db, hw, text, report_json, version, err);
  free(text);
  if (!rc) api_cache_invalidate(ctx);
  return rc;
}

int api_arch_calib_store(api_ctx *ctx, const char *arch, const cost_calib *calib,
                         const char *report_json, int *version, svc_err *err) {
  char *text = calib_params_text(calib);
  if (!text) return svc_err_set(err, SVC_NOMEM, "", NULL);
  int rc = hwdb_arch_calib_add(ctx->db, arch, text, report_json, version, err);
  free(text);
  if (!rc) api_cache_invalidate(ctx);
  return rc;
}

int api_health(api_ctx *ctx, char **out, svc_err *err) {
  int64_t n = 0;
  int rc = hwdb_hw_count(ctx->db, &n, err);
  if (rc) return rc;
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddStringToObject(doc, "status", "ok");
  cJSON_AddStringToObject(doc, "version", api_version());
  cJSON_AddNumberToObject(doc, "hardware", (double)n);
  *out = api_print(doc);
  cJSON_Delete(doc);
  return *out ? 0 : svc_err_set(err, SVC_NOMEM, "", NULL);
}
