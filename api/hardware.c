/* The hardware descriptor: JSON codec, validation rules, and the catalog
 * operations (list, get, create, replace, delete, import).
 *
 * Rules: names are [a-z0-9._-] (at most 63 bytes, starting with a letter or
 * digit); every physical quantity is a finite positive number in a sane
 * range; unknown members are rejected; every figure given must name its
 * source in "sources" (a member's own key, or "peak_tflops" for all peaks).
 * The stored document is the validated input re-printed, without the
 * read-only "calibration" member that GET adds.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyz0123456789._-"

/* Numeric members: key, required, min, max, and where it lands in cost_hw
 * (with the unit scale from the JSON unit to ours). */
typedef struct {
  const char *key;
  int required;
  double min, max;
  size_t offset; /* offsetof(cost_hw, ...) of a double, or SIZE_MAX */
  double scale;
} num_field;

#define D(f) offsetof(cost_hw, f)
#define NONE ((size_t)-1)
static const num_field num_fields[] = {
    /* clocks: any finite figure here, then api_clock_check's plausible range */
    {"clock_mhz", 1, 0, 1e12, D(clock_hz), 1e6},
    {"peak_clock_mhz", 0, 0, 1e12, D(peak_clock_hz), 1e6},
    {"sustained_clock_mhz", 0, 0, 1e12, D(sustained_clock_hz), 1e6},
    {"load_clock_mhz", 0, 0, 1e12, D(load_clock_hz), 1e6},
    {"hbm_bytes", 1, 1e6, 1e14, D(hbm_bytes), 1},
    {"hbm_usable_bytes", 0, 1e6, 1e14, D(hbm_usable_bytes), 1},
    {"hbm_bandwidth_bytes_per_s", 1, 1e9, 1e15, D(hbm_bw), 1},
    {"l2_bytes", 0, 0, 1e10, D(l2_bytes), 1},
    {"llc_bytes", 0, 0, 1e11, D(llc_bytes), 1},
    {"smem_per_unit_bytes", 0, 0, 1e8, D(smem_per_unit), 1},
    {"regs_per_unit", 0, 0, 1e8, D(regs_per_unit), 1},
    {"scaleup_bandwidth_bytes_per_s", 0, 0, 1e14, D(scaleup_bw), 1},
    {"scaleout_bandwidth_bytes_per_s", 0, 0, 1e13, D(scaleout_bw), 1},
    {"scaleup_link_bandwidth_bytes_per_s", 0, 0, 1e14, D(scaleup_link_bw), 1},
    {"host_link_bandwidth_bytes_per_s", 0, 0, 1e13, D(host_link_bw), 1},
    {"host_memory_bytes_per_node", 0, 1e9, 1e15, D(host_mem_per_node), 1},
    {"tdp_watts", 0, 1, 1e5, D(tdp_w), 1},
    {"price_per_hour_usd", 0, 0, 1e5, D(price_per_hour), 1},
    /* the bounds of launch_us (costmodel/params.c) */
    {"launch_floor_us", 0, 0.5, 20, D(launch_floor_us), 1},
};
#undef D

static const char *const top_fields[] = {
    "name", "display_name", "vendor", "arch", "arch_id", "compute_units", "scaleup_domain",
    "peak_tflops", "matrix_instructions", "sources", "notes", "calibration",
    /* numeric members of num_fields[] */
    "clock_mhz", "hbm_bytes", "hbm_usable_bytes", "hbm_bandwidth_bytes_per_s", "l2_bytes",
    "llc_bytes", "smem_per_unit_bytes", "regs_per_unit", "scaleup_bandwidth_bytes_per_s",
    "scaleout_bandwidth_bytes_per_s", "host_link_bandwidth_bytes_per_s", "tdp_watts",
    "price_per_hour_usd", "peak_clock_mhz", "sustained_clock_mhz", "load_clock_mhz",
    "scaleup_link_bandwidth_bytes_per_s", "scaleup_topology", "in_switch_reduction",
    "host_memory_bytes_per_node", "launch_floor_us", NULL};

static const char *const dtype_fields[] = {"fp64", "fp32", "tf32", "bf16", "fp16",
                                           "fp8",  "fp6",  "fp4",  "int8", NULL};

int api_clock_check(double mhz, const char *field, svc_err *err) {
  if (mhz >= API_CLOCK_MIN_MHZ && mhz <= API_CLOCK_MAX_MHZ) return 0;
  /* 1.98 for 1980 MHz: the figure was given in GHz */
  if (mhz * 1e3 >= API_CLOCK_MIN_MHZ && mhz * 1e3 <= API_CLOCK_MAX_MHZ)
    return svc_err_set(err, SVC_OUT_OF_RANGE, field,
                       "%s is in MHz: %g looks like GHz (%g MHz?); accelerator clocks lie in "
                       "[%d, %d] MHz",
                       field, mhz, mhz * 1e3, API_CLOCK_MIN_MHZ, API_CLOCK_MAX_MHZ);
  return svc_err_set(err, SVC_OUT_OF_RANGE, field,
                     "%s must be in [%d, %d] MHz, where accelerator clocks lie (got %g)", field,
                     API_CLOCK_MIN_MHZ, API_CLOCK_MAX_MHZ, mhz);
}

/* The clocks given are plausible, and the clock a dense GEMM sustains is
 * not above the one the peaks assume (peak_clock_mhz, else clock_mhz, the
 * maximum): a sustained clock above it would price GEMMs past the peak. */
static int check_clocks(const cJSON *doc, const cost_hw *hw, svc_err *err) {
  static const char *const keys[] = {"clock_mhz", "peak_clock_mhz", "sustained_clock_mhz",
                                     "load_clock_mhz"};
  const double mhz[] = {hw->clock_hz / 1e6, hw->peak_clock_hz / 1e6, hw->sustained_clock_hz / 1e6,
                        hw->load_clock_hz / 1e6};
  int rc;
  for (int i = 0; i < 4; i++)
    if (cJSON_GetObjectItemCaseSensitive(doc, keys[i]) &&
        (rc = api_clock_check(mhz[i], keys[i], err)))
      return rc;
  double top = hw->peak_clock_hz > 0 ? hw->peak_clock_hz : hw->clock_hz;
  if (hw->sustained_clock_hz > top)
    return svc_err_set(err, SVC_OUT_OF_RANGE, "sustained_clock_mhz",
                       "sustained_clock_mhz (%g) exceeds %s (%g): a GEMM cannot sustain more "
                       "than the clock its peaks assume",
                       mhz[2], hw->peak_clock_hz > 0 ? "peak_clock_mhz" : "clock_mhz", top / 1e6);
  double ref = hw->sustained_clock_hz > 0 ? hw->sustained_clock_hz : top;
  if (hw->load_clock_hz > ref)
    return svc_err_set(
        err, SVC_OUT_OF_RANGE, "load_clock_mhz",
        "load_clock_mhz (%g) exceeds %s (%g): the clock under a step's "
        "continuous load is not above the burst clock",
        mhz[3], hw->sustained_clock_hz > 0 ? "sustained_clock_mhz" : "the peak clock", ref / 1e6);
  return 0;
}

/* Every figure present needs a source: its own key, or its parent's. */
static int check_sourced(const cJSON *doc, const cJSON *sources, const char *key, svc_err *err) {
  if (!cJSON_GetObjectItemCaseSensitive(doc, key)) return 0;
  if (cJSON_GetObjectItemCaseSensitive(sources, key)) return 0;
  return svc_err_set(err, SVC_MISSING_FIELD, key,
                     "%s has no source: add sources.%s naming the datasheet or measurement", key,
                     key);
}

static int decode_sources(const cJSON *doc, svc_err *err) {
  char f[160];
  const cJSON *src = cJSON_GetObjectItemCaseSensitive(doc, "sources");
  int rc;
  if (!src) return svc_err_set(err, SVC_MISSING_FIELD, "sources", "sources is required");
  if (!cJSON_IsObject(src))
    return svc_err_set(err, SVC_BAD_FIELD, "sources", "sources must be an object");
  for (const cJSON *it = src->child; it; it = it->next) {
    const char *s = NULL;
    int known = 0;
    for (const char *const *k = top_fields; *k && !known; k++) known = !strcmp(*k, it->string);
    if (!known)
      return svc_err_set(err, SVC_UNKNOWN_FIELD, api_path(f, sizeof f, "sources", it->string),
                         "sources.%s names no field of the descriptor", it->string);
    if ((rc = api_get_str(src, it->string, "sources", 1, 1000, NULL, &s, err))) return rc;
    if (!*s)
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, "sources", it->string),
                         "sources.%s is empty", it->string);
  }
  for (size_t i = 0; i < sizeof num_fields / sizeof num_fields[0]; i++)
    if ((rc = check_sourced(doc, src, num_fields[i].key, err))) return rc;
  static const char *const others[] = {"compute_units",    "scaleup_domain",
                                       "peak_tflops",      "matrix_instructions",
                                       "scaleup_topology", "in_switch_reduction"};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
    if ((rc = check_sourced(doc, src, others[i], err))) return rc;
  return 0;
}

static int decode_peaks(const cJSON *doc, cost_hw *hw, svc_err *err) {
  const cJSON *pk = cJSON_GetObjectItemCaseSensitive(doc, "peak_tflops");
  int rc, any = 0;
  if (!pk) return svc_err_set(err, SVC_MISSING_FIELD, "peak_tflops", "peak_tflops is required");
  if (!cJSON_IsObject(pk))
    return svc_err_set(err, SVC_BAD_FIELD, "peak_tflops", "peak_tflops must be an object");
  if ((rc = api_check_fields(pk, dtype_fields, "peak_tflops", err))) return rc;
  for (int d = 0; dtype_fields[d]; d++) {
    double v = 0;
    if ((rc = api_get_num(pk, dtype_fields[d], "peak_tflops", 0, 1e-3, 1e6, &v, err))) return rc;
    int dt = cost_dtype_parse(dtype_fields[d]);
    if (dt >= 0) hw->peak_flops[dt] = v * 1e12;
    any |= v > 0;
  }
  if (!any)
    return svc_err_set(err, SVC_MISSING_FIELD, "peak_tflops",
                       "peak_tflops needs the dense peak of at least one dtype");
  return 0;
}

static int decode_mma(const cJSON *doc, cost_hw *hw, svc_err *err) {
  static const char *const mma_fields[] = {"dtype", "m", "n", "k", NULL};
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(doc, "matrix_instructions");
  char p[64];
  int rc, i = 0;
  if (!arr) return 0;
  if (!cJSON_IsArray(arr))
    return svc_err_set(err, SVC_BAD_FIELD, "matrix_instructions",
                       "matrix_instructions must be an array");
  if (cJSON_GetArraySize(arr) > COST_MAX_MMA)
    return svc_err_set(err, SVC_OUT_OF_RANGE, "matrix_instructions",
                       "matrix_instructions holds at most %d shapes", COST_MAX_MMA);
  for (const cJSON *it = arr->child; it; it = it->next, i++) {
    const char *dt = NULL;
    int64_t m = 0, n = 0, k = 0;
    snprintf(p, sizeof p, "matrix_instructions[%d]", i);
    if (!cJSON_IsObject(it)) return svc_err_set(err, SVC_BAD_FIELD, p, "%s must be an object", p);
    if ((rc = api_check_fields(it, mma_fields, p, err)) ||
        (rc = api_get_str(it, "dtype", p, 1, 8, NAME_CHARS, &dt, err)) ||
        (rc = api_get_int(it, "m", p, 1, 1, 1024, &m, err)) ||
        (rc = api_get_int(it, "n", p, 1, 1, 1024, &n, err)) ||
        (rc = api_get_int(it, "k", p, 1, 1, 1024, &k, err)))
      return rc;
    int d = cost_dtype_parse(dt);
    if (d < 0) {
      char f[96];
      return svc_err_set(err, SVC_BAD_FIELD, api_path(f, sizeof f, p, "dtype"),
                         "%s.dtype: unknown dtype '%s'", p, dt);
    }
    hw->mma[i] = (cost_mma){d, (int)m, (int)n, (int)k};
  }
  hw->n_mma = i;
  return 0;
}

const char *const api_fabric_fields[] = {
    "scaleout_bandwidth_bytes_per_s", "scaleup_bandwidth_bytes_per_s", "in_switch_reduction", NULL};

int api_fabric_decode(const cJSON *cl, const char *path, cost_hw *hw, svc_err *err) {
  char f[96];
  double v = 0;
  int rc;
  if (!cl) return 0;
  if ((rc = api_get_num(cl, "scaleout_bandwidth_bytes_per_s", path, 0, 1e8, 1e13, &v, err)))
    return rc;
  if (v > 0) hw->scaleout_bw = v;
  v = 0;
  if ((rc = api_get_num(cl, "scaleup_bandwidth_bytes_per_s", path, 0, 1e8, 1e14, &v, err)))
    return rc;
  if (v > 0) {
    /* A mesh's per-link figure scales with the whole. */
    if (hw->scaleup_link_bw > 0 && hw->scaleup_bw > 0) hw->scaleup_link_bw *= v / hw->scaleup_bw;
    hw->scaleup_bw = v;
  }
  const cJSON *isr = cJSON_GetObjectItemCaseSensitive(cl, "in_switch_reduction");
  if (isr) {
    api_path(f, sizeof f, path, "in_switch_reduction");
    if (!cJSON_IsBool(isr))
      return svc_err_set(err, SVC_BAD_FIELD, f, "%s must be true or false", f);
    if (cJSON_IsTrue(isr) && hw->scaleup_mesh)
      return svc_err_set(err, SVC_BAD_FIELD, f, "%s: %s's scale-up domain is a mesh, no switch", f,
                         hw->name);
    hw->in_switch_reduction = cJSON_IsTrue(isr);
  }
  return 0;
}

/* How the scale-up domain is wired (collective.c uses it): "switch"
 * (default) or "mesh", and whether the switch reduces in-network. */
static int decode_topology(const cJSON *doc, cost_hw *hw, svc_err *err) {
  const char *topo = NULL;
  int rc;
  if ((rc = api_get_str(doc, "scaleup_topology", "", 0, 16, NAME_CHARS, &topo, err))) return rc;
  if (topo && strcmp(topo, "switch") && strcmp(topo, "mesh"))
    return svc_err_set(err, SVC_BAD_FIELD, "scaleup_topology",
                       "scaleup_topology must be switch or mesh (got '%.16s')", topo);
  hw->scaleup_mesh = topo && !strcmp(topo, "mesh");
  const cJSON *isr = cJSON_GetObjectItemCaseSensitive(doc, "in_switch_reduction");
  if (isr && !cJSON_IsBool(isr))
    return svc_err_set(err, SVC_BAD_FIELD, "in_switch_reduction",
                       "in_switch_reduction must be true or false");
  hw->in_switch_reduction = cJSON_IsTrue(isr);
  if (hw->scaleup_mesh && hw->in_switch_reduction)
    return svc_err_set(err, SVC_BAD_FIELD, "in_switch_reduction",
                       "a mesh has no switch to reduce in: in_switch_reduction needs "
                       "scaleup_topology switch");
  return 0;
}

int api_hw_decode(const cJSON *doc, cost_hw *hw, svc_err *err) {
  const char *name = NULL, *vendor = NULL, *arch = NULL, *s = NULL;
  int64_t cu = 0, domain = 1;
  int rc;
  memset(hw, 0, sizeof *hw);
  if (!cJSON_IsObject(doc))
    return svc_err_set(err, SVC_BAD_JSON, "", "descriptor must be an object");
  if ((rc = api_check_fields(doc, top_fields, "", err))) return rc;
  if ((rc = api_get_str(doc, "name", "", 1, 63, NAME_CHARS, &name, err))) return rc;
  if (!api_valid_name(name))
    return svc_err_set(
        err, SVC_BAD_FIELD, "name",
        "name must be 1-63 characters of [a-z0-9._-] starting with a letter or digit");
  if ((rc = api_get_str(doc, "vendor", "", 1, 31, NAME_CHARS, &vendor, err)) ||
      (rc = api_get_str(doc, "arch", "", 1, 31, NAME_CHARS, &arch, err)) ||
      (rc = api_get_str(doc, "display_name", "", 0, 127, NULL, &s, err)) ||
      (rc = api_get_str(doc, "arch_id", "", 0, 31, NULL, &s, err)) ||
      (rc = api_get_str(doc, "notes", "", 0, 4000, NULL, &s, err)) ||
      (rc = api_get_int(doc, "compute_units", "", 1, 1, 1000000, &cu, err)) ||
      (rc = api_get_int(doc, "scaleup_domain", "", 0, 1, 1000000, &domain, err)))
    return rc;
  if (!*vendor || !*arch)
    return svc_err_set(err, SVC_BAD_FIELD, *vendor ? "arch" : "vendor", "must not be empty");
  svc_strlcpy(hw->name, name, sizeof hw->name);
  svc_strlcpy(hw->vendor, vendor, sizeof hw->vendor);
  svc_strlcpy(hw->arch, arch, sizeof hw->arch);
  hw->compute_units = (int)cu;
  hw->scaleup_domain = (int)domain;
  for (size_t i = 0; i < sizeof num_fields / sizeof num_fields[0]; i++) {
    const num_field *nf = &num_fields[i];
    double v = 0;
    if ((rc = api_get_num(doc, nf->key, "", nf->required, nf->min, nf->max, &v, err))) return rc;
    *(double *)((char *)hw + nf->offset) = v * nf->scale;
  }
  if ((rc = check_clocks(doc, hw, err))) return rc;
  if (hw->hbm_usable_bytes == 0) hw->hbm_usable_bytes = hw->hbm_bytes;
  if (hw->hbm_usable_bytes > hw->hbm_bytes)
    return svc_err_set(err, SVC_OUT_OF_RANGE, "hbm_usable_bytes",
                       "hbm_usable_bytes (%.0f) exceeds hbm_bytes (%.0f)", hw->hbm_usable_bytes,
                       hw->hbm_bytes);
  if ((rc = decode_topology(doc, hw, err)) || (rc = decode_peaks(doc, hw, err)) ||
      (rc = decode_mma(doc, hw, err)) || (rc = decode_sources(doc, err)))
    return rc;
  return 0;
}

/* Validate body, return the parsed document without "calibration". */
static int parse_descriptor(const char *body, size_t len, cJSON **doc, cost_hw *hw, svc_err *err) {
  int rc = api_parse_body(body, len, doc, err);
  if (rc) return rc;
  if ((rc = api_hw_decode(*doc, hw, err))) {
    cJSON_Delete(*doc);
    *doc = NULL;
    return rc;
  }
  cJSON_DeleteItemFromObjectCaseSensitive(*doc, "calibration");
  return 0;
}

int api_hw_parse(const char *text, size_t len, cost_hw *out, svc_err *err) {
  cJSON *doc = NULL;
  int rc = parse_descriptor(text, len, &doc, out, err);
  cJSON_Delete(doc);
  return rc;
}

/* Add the latest calibration (read-only) to a stored descriptor. */
static cJSON *with_calibration(api_ctx *ctx, const char *name, const char *doc_text) {
  cJSON *doc = cJSON_Parse(doc_text);
  hwdb_calib c;
  if (!doc) return NULL;
  if (hwdb_calib_latest(ctx->db, name, &c, NULL) == 0) {
    cJSON *cal = cJSON_AddObjectToObject(doc, "calibration");
    cJSON_AddNumberToObject(cal, "version", c.version);
    cJSON *params = c.params ? cJSON_Parse(c.params) : NULL;
    if (params) cJSON_AddItemToObject(cal, "params", params);
    if (api_calib_host_only_json(params)) cJSON_AddBoolToObject(cal, "host_only", 1);
    hwdb_calib_dispose(&c);
  }
  return doc;
}

static int reply(cJSON *doc, char **out, svc_err *err) {
  *out = doc ? api_print(doc) : NULL;
  cJSON_Delete(doc);
  return *out ? 0 : svc_err_set(err, SVC_NOMEM, "", NULL);
}

int api_hw_list(api_ctx *ctx, const char *vendor, char **out, svc_err *err) {
  hwdb_hw *list = NULL;
  size_t n = 0;
  int rc;
  *out = NULL;
  if (vendor && (!*vendor || strlen(vendor) > 31 || strspn(vendor, NAME_CHARS) != strlen(vendor)))
    return svc_err_set(err, SVC_BAD_FIELD, "vendor",
                       "vendor must be [a-z0-9._-], at most 31 bytes");
  if ((rc = hwdb_hw_list(ctx->db, vendor, &list, &n, err))) return rc;
  cJSON *doc = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(doc, "hardware");
  for (size_t i = 0; i < n; i++) {
    cJSON *d = with_calibration(ctx, list[i].name, list[i].doc);
    if (d) cJSON_AddItemToArray(arr, d);
  }
  hwdb_hw_list_free(list, n);
  return reply(doc, out, err);
}

int api_hw_get(api_ctx *ctx, const char *name, char **out, svc_err *err) {
  hwdb_hw row;
  int rc;
  *out = NULL;
  if (!api_valid_name(name))
    return svc_err_set(err, SVC_NOT_FOUND, "name", "unknown hardware '%.63s'", name ? name : "");
  if ((rc = hwdb_hw_get(ctx->db, name, &row, err))) return rc;
  cJSON *doc = with_calibration(ctx, name, row.doc);
  hwdb_hw_dispose(&row);
  if (!doc) return svc_err_set(err, SVC_INTERNAL, "", "stored descriptor of '%s' is corrupt", name);
  return reply(doc, out, err);
}

static int store(api_ctx *ctx, const char *body, size_t len, const char *path_name, int mode,
                 int *created, api_reply *r, svc_err *err) {
  cJSON *doc = NULL;
  char *text = NULL;
  cost_hw hw;
  int rc;
  r->json = NULL;
  if ((rc = parse_descriptor(body, len, &doc, &hw, err))) return rc;
  if (path_name && strcmp(path_name, hw.name) != 0) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "name", "name '%s' does not match the URL's '%.63s'",
                     hw.name, path_name);
    goto cleanup;
  }
  if (!(text = api_print(doc))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  if ((rc = hwdb_hw_put(ctx->db, hw.name, hw.vendor, text, mode, created, err))) goto cleanup;
  api_cache_invalidate(ctx);
  snprintf(r->id, sizeof r->id, "%s", hw.name);
  rc = api_hw_get(ctx, hw.name, &r->json, err);
cleanup:
  free(text);
  cJSON_Delete(doc);
  return rc;
}

int api_hw_create_reply(api_ctx *ctx, const char *body, size_t len, api_reply *r, svc_err *err) {
  return store(ctx, body, len, NULL, 0, NULL, r, err);
}

int api_hw_create(api_ctx *ctx, const char *body, size_t len, char **out, svc_err *err) {
  api_reply r = {0};
  int rc = store(ctx, body, len, NULL, 0, NULL, &r, err);
  *out = r.json;
  return rc;
}

int api_hw_replace(api_ctx *ctx, const char *name, const char *body, size_t len, int *created,
                   char **out, svc_err *err) {
  if (!api_valid_name(name))
    return svc_err_set(err, SVC_BAD_FIELD, "name", "name in the URL must be [a-z0-9._-]");
  api_reply r = {0};
  int rc = store(ctx, body, len, name, 1, created, &r, err);
  *out = r.json;
  return rc;
}

int api_hw_delete(api_ctx *ctx, const char *name, svc_err *err) {
  if (!api_valid_name(name))
    return svc_err_set(err, SVC_NOT_FOUND, "name", "unknown hardware '%.63s'", name ? name : "");
  int rc = hwdb_hw_delete(ctx->db, name, err);
  if (!rc) api_cache_invalidate(ctx);
  return rc;
}

/* A batch of descriptor texts stored as one transaction: the seed catalog
 * and `hw import`. label names each text in errors. */
int api_hw_store_many(api_ctx *ctx, size_t n, const char *const *texts, const size_t *lens,
                      const char *const *labels, cJSON *names_out, svc_err *err) {
  char **docs = calloc(n ? n : 1, sizeof *docs);
  cost_hw *hws = calloc(n ? n : 1, sizeof *hws);
  const char **names = calloc(n ? n : 1, sizeof *names),
             **vendors = calloc(n ? n : 1, sizeof *vendors);
  int rc = 0;
  if (!docs || !hws || !names || !vendors) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  for (size_t i = 0; i < n; i++) {
    cJSON *doc = NULL;
    if ((rc = parse_descriptor(texts[i], lens[i], &doc, &hws[i], err))) {
      svc_err_prefix(err, labels[i]);
      goto cleanup;
    }
    docs[i] = api_print(doc);
    cJSON_Delete(doc);
    if (!docs[i]) {
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
      goto cleanup;
    }
    names[i] = hws[i].name;
    vendors[i] = hws[i].vendor;
  }
  if ((rc = hwdb_hw_put_many(ctx->db, n, names, vendors, (const char *const *)docs, err)))
    goto cleanup;
  api_cache_invalidate(ctx);
  for (size_t i = 0; names_out && i < n; i++)
    cJSON_AddItemToArray(names_out, cJSON_CreateString(names[i]));
cleanup:
  for (size_t i = 0; docs && i < n; i++) free(docs[i]);
  free(docs);
  free(hws);
  free(names);
  free(vendors);
  return rc;
}

int api_hw_import_dir(api_ctx *ctx, const char *dir, char **out, svc_err *err) {
  DIR *d = NULL;
  struct dirent *e;
  char **texts = NULL, **labels = NULL;
  size_t *lens = NULL, n = 0, cap = 0;
  int rc = 0;
  *out = NULL;
  if (!(d = opendir(dir))) return svc_err_set(err, SVC_IO, "dir", "cannot open directory %s", dir);
  while ((e = readdir(d))) {
    size_t l = strlen(e->d_name);
    if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      char **nt = realloc(texts, cap * sizeof *nt), **nl = NULL;
      if (nt) texts = nt;
      nl = realloc(labels, cap * sizeof *nl);
      if (nl) labels = nl;
      size_t *nlen = realloc(lens, cap * sizeof *nlen);
      if (nlen) lens = nlen;
      if (!nt || !nl || !nlen) {
        rc = svc_err_set(err, SVC_NOMEM, "", NULL);
        goto cleanup;
      }
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    labels[n] = strdup(path);
    texts[n] = NULL;
    if (!labels[n]) {
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
      goto cleanup;
    }
    n++;
    if ((rc = svc_read_file(path, API_MAX_BODY, &texts[n - 1], &lens[n - 1], err))) goto cleanup;
  }
  if (n == 0) {
    rc = svc_err_set(err, SVC_NOT_FOUND, "dir", "no *.json descriptors in %s", dir);
    goto cleanup;
  }
  cJSON *doc = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(doc, "imported");
  if ((rc = api_hw_store_many(ctx, n, (const char *const *)texts, lens, (const char *const *)labels,
                              arr, err))) {
    cJSON_Delete(doc);
    goto cleanup;
  }
  rc = reply(doc, out, err);
cleanup:
  if (d) closedir(d);
  for (size_t i = 0; i < n; i++) {
    free(texts[i]);
    free(labels[i]);
  }
  free(texts);
  free(labels);
  free(lens);
  return rc;
}
