/* bench/kernel_sweep.c: load a Triton config sweep and score the kernel
 * selector on it (top-1 efficiency, Kendall tau, the fixed-config
 * baseline), plus the coordinate-search fit behind the model's defaults.
 * See kernel_sweep.h. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/kernel_sweep.h"
#include "bench/costmodel_load.h"

static double num(const cJSON *o, const char *k, double def) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : def;
}

/* The parsed file at path and its "rows" array, or NULL with a message on
 * stderr (unreadable, bad JSON, no rows array); the caller deletes it. */
static cJSON *load_rows(const char *path, const cJSON **rows) {
  size_t len = 0;
  char *text = cm_slurp(path, &len);
  if (!text) {
    fprintf(stderr, "kernel_sweep: cannot read %s\n", path);
    return NULL;
  }
  cJSON *doc = cJSON_ParseWithLength(text, len);
  free(text);
  *rows = cJSON_GetObjectItemCaseSensitive(doc, "rows");
  if (!cJSON_IsArray(*rows)) {
    fprintf(stderr, "kernel_sweep: %s: no rows array\n", path);
    cJSON_Delete(doc);
    return NULL;
  }
  return doc;
}

static int load_sweep(const char *path, double max_spread, ks_shape **out, int *n);

int ks_load(const char *path, ks_shape **out, int *n) { return load_sweep(path, 0, out, n); }

int ks_load_stable(const char *path, double max_spread, ks_shape **out, int *n) {
  return load_sweep(path, max_spread, out, n);
}

static int load_sweep(const char *path, double max_spread, ks_shape **out, int *n) {
  const cJSON *rows;
  cJSON *doc = load_rows(path, &rows);
  int rc = -1, cap;
  *out = NULL;
  *n = 0;
  if (!doc) return -1;
  cap = cJSON_GetArraySize(rows);
  if (!(*out = calloc(cap > 0 ? (size_t)cap : 1, sizeof **out))) goto cleanup;
  for (const cJSON *r = rows->child; r; r = r->next) {
    ks_shape *s = &(*out)[*n];
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(r, "dtype");
    const cJSON *cfgs = cJSON_GetObjectItemCaseSensitive(r, "configs");
    int d = cJSON_IsString(dt) ? cost_dtype_parse(dt->valuestring) : -1;
    if (d < 0 || !cJSON_IsArray(cfgs)) continue;
    const cJSON *lay = cJSON_GetObjectItemCaseSensitive(r, "layout");
    s->p = (cost_kproblem){(int64_t)num(r, "m", 0), (int64_t)num(r, "n", 0),
                           (int64_t)num(r, "k", 0), d, "nn"};
    if (cJSON_IsString(lay) && strlen(lay->valuestring) == 2)
      memcpy(s->p.layout, lay->valuestring, 3);
    for (const cJSON *c = cfgs->child; c && s->n < KS_MAX_CFG; c = c->next) {
      double ms = num(c, "ms", -1), mn = num(c, "min_ms", ms);
      if (!(ms > 0) || (max_spread > 0 && ms > max_spread * mn)) continue;
      s->cfg[s->n] =
          (cost_kcfg){(int)num(c, "bm", 0),     (int)num(c, "bn", 0),     (int)num(c, "bk", 0),
                      (int)num(c, "warps", 4),  (int)num(c, "stages", 3), (int)num(c, "group_m", 8),
                      (int)num(c, "split_k", 1)};
      s->ms[s->n++] = ms;
    }
    if (s->n > 0 && s->p.m > 0 && s->p.n > 0 && s->p.k > 0) (*n)++;
  }
  rc = 0;
cleanup:
  cJSON_Delete(doc);
  return rc;
}

int ks_load_set(const char *src, const char *set, int optional, ks_shape **out, int *n) {
  char path[1024];
  *out = NULL;
  *n = 0;
  snprintf(path, sizeof path, "%s/data/measurements/%s/triton_configs.json", src, set);
  if (optional && !cm_exists(path)) return 0;
  return ks_load(path, out, n);
}

int ks_load_hw(const char *path, cost_hw *hw) {
  size_t len = 0;
  char *text;
  cJSON *doc;
  if (cm_load_hw(path, hw) || !(text = cm_slurp(path, &len))) return -1;
  doc = cJSON_ParseWithLength(text, len);
  const cJSON *arch = cJSON_GetObjectItemCaseSensitive(doc, "arch");
  const cJSON *vendor = cJSON_GetObjectItemCaseSensitive(doc, "vendor");
  if (cJSON_IsString(arch)) snprintf(hw->arch, sizeof hw->arch, "%s", arch->valuestring);
  if (cJSON_IsString(vendor)) snprintf(hw->vendor, sizeof hw->vendor, "%s", vendor->valuestring);
  cJSON_Delete(doc);
  free(text);
  return 0;
}

double ks_kendall(const double *x, const double *y, int n) {
  long conc = 0, disc = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) {
      double a = x[i] - x[j], b = y[i] - y[j];
      if (a == 0 || b == 0) continue;
      if ((a > 0) == (b > 0))
        conc++;
      else
        disc++;
    }
  return conc + disc ? (double)(conc - disc) / (double)(conc + disc) : 0.0;
}

void ks_evaluate(const cost_hw *hw, const double *kp, const cost_kfamily *fam, int nfam,
                 const ks_shape *shapes, int n, ks_score *s) {
  double own[COST_KP__COUNT], *effs = s->effs;
  double log_eff = 0, log_base = 0;
  if (!kp) {
    cost_kparams_resolve(hw, own);
    kp = own;
  }
  if (nfam < 0) fam = cost_kfamily_builtin(hw, &nfam);
  memset(s, 0, sizeof *s);
  s->effs = effs;
  s->eff_min = s->tau_min = s->base_min = INFINITY;
  for (int i = 0; i < n; i++) {
    const ks_shape *sh = &shapes[i];
    double pred[KS_MAX_CFG], meas[KS_MAX_CFG], best = INFINITY, chosen_ms = NAN,
                                               chosen_pred = INFINITY;
    double base = INFINITY;
    int m = 0;
    for (int j = 0; j < sh->n; j++) {
      cost_kpred r;
      const cost_kcfg *c = &sh->cfg[j];
      best = fmin(best, sh->ms[j]);
      if (c->block_m == 128 && c->block_n == 128 && c->block_k == 64 && c->num_warps == 4 &&
          c->num_stages == 3)
        base = sh->ms[j];
      if (cost_kernel_predict_p(hw, kp, &sh->p, c, &r) || !r.feasible) continue;
      r.ms *= cost_kfamily_factor(fam, nfam, &sh->p, c);
      pred[m] = r.ms;
      meas[m++] = sh->ms[j];
      if (r.ms < chosen_pred) {
        chosen_pred = r.ms;
        chosen_ms = sh->ms[j];
      }
    }
    double eff = m ? best / chosen_ms : 0.0, tau = ks_kendall(pred, meas, m);
    if (effs) effs[s->n] = eff;
    log_eff += log(fmax(eff, 1e-9));
    s->eff_min = fmin(s->eff_min, eff);
    s->tau_mean += tau;
    s->tau_min = fmin(s->tau_min, tau);
    if (isfinite(base)) {
      log_base += log(best / base);
      s->base_min = fmin(s->base_min, best / base);
      s->base_n++;
    }
    s->n++;
  }
  if (s->n) {
    s->eff_geo = exp(log_eff / s->n);
    s->tau_mean /= s->n;
  }
  if (s->base_n) s->base_geo = exp(log_base / s->base_n);
}

/* The fit's loss: mean squared log error over the measured configs the
 * model deems feasible, each weighted by (best measured / its measured)^a,
 * so that a config twice as slow as the shape's best counts a quarter:
 * top-1 selection depends on ranking the fast configs, and an unweighted
 * fit spends its freedom on configs 3-50x off the best. a was chosen by the
 * fit set's 2-fold CV top-1 geo-mean (docs/kernels.md): a = 0 0.930,
 * 1 0.956, 2 0.965, 3 0.961, 4 0.967, 6 0.919, 8 0.878; 2 sits in the
 * stable middle of that range. */
#ifndef KS_FIT_WEIGHT_EXP
#define KS_FIT_WEIGHT_EXP 2.0
#endif

double ks_loss(const cost_hw *hw, const double *kp, const ks_shape *shapes, int n) {
  double sum = 0, cnt = 0, a = KS_FIT_WEIGHT_EXP;
  for (int i = 0; i < n; i++) {
    double best = INFINITY;
    for (int j = 0; j < shapes[i].n; j++) best = fmin(best, shapes[i].ms[j]);
    for (int j = 0; j < shapes[i].n; j++) {
      cost_kpred r;
      if (cost_kernel_predict_p(hw, kp, &shapes[i].p, &shapes[i].cfg[j], &r) || !r.feasible)
        continue;
      double e = log(r.ms / shapes[i].ms[j]), w = a > 0 ? pow(best / shapes[i].ms[j], a) : 1;
      sum += w * e * e;
      cnt += w;
    }
  }
  return cnt > 0 ? sum / cnt : INFINITY;
}

double ks_fit(const cost_hw *hw, double *kp, const ks_shape *shapes, int n, int rounds) {
  /* Every parameter but the awkward-shape terms (split-K, small-M tiles),
   * which bench/kernel_awkward fits on data/measurements/h200-awkward/. */
  int ids[COST_KP__COUNT], k = 0;
  for (int i = 0; i < COST_KP__COUNT; i++)
    if (i != COST_KP_SK_US && i != COST_KP_SK_EPI && i != COST_KP_SMALLM &&
        i != COST_KP_REG_SC_KB && i != COST_KP_SC_KB && i != COST_KP_SPILL_KB &&
        i != COST_KP_LAT_KB && i != COST_KP_ISSUE_KB && i != COST_KP_ALIAS_CLK &&
        i != COST_KP_SK_NS && i != COST_KP_SC_L1_KB && i != COST_KP_EPI_SC &&
        i != COST_KP_REG_OCC && /* a compile-data constant, not fitted to times */
        i != COST_KP_SC_LINES && i != COST_KP_SC_REFETCH && i != COST_KP_AWK_FAM &&
        i != COST_KP_AWK_REL) /* measured residuals' weights */
      ids[k++] = i;
  return ks_fit_subset(hw, kp, ids, k, shapes, n, rounds);
}

double ks_fit_subset(const cost_hw *hw, double *kp, const int *ids, int n_ids,
                     const ks_shape *shapes, int n, int rounds) {
  double best = ks_loss(hw, kp, shapes, n), step = 0.3;
  for (int r = 0; r < rounds; r++, step *= 0.6)
    for (int ii = 0; ii < n_ids; ii++) {
      int id = ids[ii];
      double lo, hi;
      cost_kparam_info(id, NULL, NULL, &lo, &hi);
      for (int dir = 0; dir < 2; dir++) {
        double f = dir ? 1.0 / (1.0 + step) : 1.0 + step;
        for (;;) {
          double old = kp[id], v = fmin(hi, fmax(lo, old * f));
          if (v == old) break;
          kp[id] = v;
          double l = ks_loss(hw, kp, shapes, n);
          if (l < best - 1e-9) {
            best = l;
          } else {
            kp[id] = old;
            break;
          }
        }
      }
    }
  return best;
}

/* Family corrections: weighted mean log residual per family, shrunk by
 * KS_FAM_SHRINK pseudo-samples of weight 1 at 0. Weights favour configs
 * near each shape's best, as in ks_loss; exponent and shrinkage were chosen
 * by the fit set's 2-fold CV (docs/kernels.md, "Family corrections"). */
#ifndef KS_FAM_WEIGHT_EXP
#define KS_FAM_WEIGHT_EXP 1.0
#endif
#ifndef KS_FAM_SHRINK
#define KS_FAM_SHRINK 1
#endif

static int fam_cmp(const void *x, const void *y) {
  const cost_kfamily *a = x, *b = y;
  int ka[7] = {a->elem_bytes, a->a_scalar, a->b_scalar, a->block_m,
               a->block_n,    a->block_k,  a->num_warps};
  int kb[7] = {b->elem_bytes, b->a_scalar, b->b_scalar, b->block_m,
               b->block_n,    b->block_k,  b->num_warps};
  for (int i = 0; i < 7; i++)
    if (ka[i] != kb[i]) return ka[i] < kb[i] ? -1 : 1;
  return 0;
}

int ks_fit_families(const cost_hw *hw, const double *kp, const ks_shape *shapes, int n,
                    cost_kfamily *out, int cap) {
  double wsum[KS_MAX_CFG * 4] = {0};
  int nf = 0, lim = cap < KS_MAX_CFG * 4 ? cap : KS_MAX_CFG * 4;
  for (int i = 0; i < n; i++) {
    const ks_shape *sh = &shapes[i];
    double best = INFINITY;
    for (int j = 0; j < sh->n; j++) best = fmin(best, sh->ms[j]);
    for (int j = 0; j < sh->n; j++) {
      cost_kpred r;
      const cost_kcfg *c = &sh->cfg[j];
      if (cost_kernel_predict_p(hw, kp, &sh->p, c, &r) || !r.feasible) continue;
      /* each operand's leading dimension, as costmodel/kernel.c reads the layout */
      int bt = sh->p.layout[0] && sh->p.layout[1] == 't';
      cost_kfamily key = {(int)cost_dtype_bytes((cost_dtype)sh->p.dtype),
                          c->block_m,
                          c->block_n,
                          c->block_k,
                          c->num_warps,
                          (sh->p.layout[0] == 't' ? sh->p.m : sh->p.k) % 16 != 0,
                          (bt ? sh->p.k : sh->p.n) % 16 != 0,
                          0.0};
      /* keyed as cost_kfamily_factor looks them up: a 16-bit K-major
       * scalar B (nt) is a family of its own (b_scalar 2) */
      if (key.b_scalar && key.elem_bytes == 2 && bt) key.b_scalar = 2;
      int f = 0;
      while (f < nf && fam_cmp(&out[f], &key)) f++;
      if (f == nf) {
        if (nf == lim) continue;
        out[nf++] = key;
      }
      double w = pow(best / sh->ms[j], KS_FAM_WEIGHT_EXP);
      out[f].log_factor += w * log(sh->ms[j] / r.ms);
      wsum[f] += w;
    }
  }
  for (int f = 0; f < nf; f++) out[f].log_factor /= wsum[f] + KS_FAM_SHRINK;
  qsort(out, (size_t)nf, sizeof *out, fam_cmp);
  return nf;
}

/* splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): a fixed, platform-independent sequence. */
static uint64_t ks_rng(uint64_t *st) {
  uint64_t z = (*st += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static double ks_unit(uint64_t *st) { return (double)(ks_rng(st) >> 11) * 0x1.0p-53; }

double ks_fit_multi(const cost_hw *hw, double *kp, const ks_shape *shapes, int n, int rounds,
                    int starts) {
  double best = ks_fit(hw, kp, shapes, n, rounds), cand[COST_KP__COUNT];
  uint64_t st = 0x6b73u; /* fixed seed: the fit is deterministic */
  for (int s = 1; s < starts; s++) {
    for (int id = 0; id < COST_KP__COUNT; id++) {
      if (id == COST_KP_REG_SC_KB || id == COST_KP_SC_KB || id == COST_KP_SPILL_KB ||
          id == COST_KP_REG_OCC || id == COST_KP_SC_LINES || id == COST_KP_SC_REFETCH ||
          id == COST_KP_AWK_FAM || id == COST_KP_AWK_REL) { /* not fitted here; no draw */
        cand[id] = kp[id];
        continue;
      }
      double lo, hi, f = exp(log(1.5) * (2.0 * ks_unit(&st) - 1.0));
      cost_kparam_info(id, NULL, NULL, &lo, &hi);
      cand[id] = fmin(hi, fmax(lo, kp[id] * f));
    }
    double l = ks_fit(hw, cand, shapes, n, rounds);
    if (l < best - 1e-9) {
      best = l;
      memcpy(kp, cand, sizeof cand);
    }
  }
  return best;
}

void ks_split(int n, int split, int *fold) {
  int *perm = malloc((size_t)(n > 0 ? n : 1) * sizeof *perm);
  uint64_t st = (uint64_t)split * 0x2545f4914f6cdd1dULL;
  if (!perm || split == 0) {
    for (int i = 0; i < n; i++) fold[i] = i % 2;
    free(perm);
    return;
  }
  for (int i = 0; i < n; i++) perm[i] = i;
  for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
    int j = (int)(ks_rng(&st) % (uint64_t)(i + 1)), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (int i = 0; i < n; i++) fold[perm[i]] = i < n / 2 ? 0 : 1;
  free(perm);
}

/* Compile facts (validate/gpu/compile_info.py) against the model: per row
 * one config compiled (or refused) by Triton for one dtype and shape class. */
int ks_compile_check(const cost_hw *hw, const char *path, int verbose, ks_cc_score *s) {
  const cJSON *rows, *r;
  double kp[COST_KP__COUNT];
  memset(s, 0, sizeof *s);
  cJSON *doc = load_rows(path, &rows);
  if (!doc) return -1;
  cost_kparams_resolve(hw, kp);
  cJSON_ArrayForEach(r, rows) {
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(r, "dtype");
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(r, "ok");
    int d = cJSON_IsString(dt) ? cost_dtype_parse(dt->valuestring) : -1;
    if (d < 0 || !cJSON_IsBool(ok)) continue;
    cost_kproblem p = {(int64_t)num(r, "m", 0), (int64_t)num(r, "n", 0), (int64_t)num(r, "k", 0), d,
                       "nn"};
    cost_kcfg c = {(int)num(r, "bm", 0),
                   (int)num(r, "bn", 0),
                   (int)num(r, "bk", 0),
                   (int)num(r, "warps", 0),
                   (int)num(r, "stages", 0),
                   (int)num(r, "group_m", 8),
                   1};
    cost_kpred out;
    if (cost_kernel_predict_p(hw, kp, &p, &c, &out)) continue;
    int compiled = cJSON_IsTrue(ok);
    double smem = compiled ? num(r, "shared", -1) : num(r, "required_shared", -1);
    s->n++;
    if (compiled != out.feasible) s->feasible_wrong++;
    if (!compiled && out.feasible) s->refused_feasible++;
    if (compiled && !out.feasible && !strncmp(out.reason, "registers:", 10)) s->compiled_reg_rule++;
    if (smem >= 0) {
      s->smem_n++;
      if (fabs(smem - out.smem) < 0.5) s->smem_exact++;
    }
    /* verbose 2 (kernel_select --compile-regs): the model's register
     * estimate and blocks per SM beside the compiler's count (twelfth round) */
    if (verbose > 1 && compiled && out.feasible)
      printf(
          "ccregs %-5s %s %s %3d %3d %3d %d %d model %d occ %d compiler %d spills %d shared %.0f\n",
          dt->valuestring, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "class")), "nn",
          c.block_m, c.block_n, c.block_k, c.num_warps, c.num_stages, out.regs, out.occupancy,
          (int)num(r, "n_regs", 0), (int)num(r, "n_spills", 0), num(r, "shared", 0));
    if (compiled) {
      int m_spill = out.spill > 1.0 + 1e-9, c_spill = num(r, "n_spills", 0) > 0;
      s->compiled++;
      if (m_spill == c_spill) s->spill_agree++;
      if (c_spill) s->spill_compiler++;
      if (m_spill) s->spill_model++;
    }
    if (verbose == 1 && (smem < 0 || fabs(smem - out.smem) >= 0.5 || compiled != out.feasible))
      printf("compile-check %-5s %6lld %6lld %6lld %3dx%3dx%3d w%d s%d: compiler %s smem %.0f, "
             "model %s smem %.0f%s%s\n",
             dt->valuestring, (long long)p.m, (long long)p.n, (long long)p.k, c.block_m, c.block_n,
             c.block_k, c.num_warps, c.num_stages, compiled ? "ok" : "refused", smem,
             out.feasible ? "feasible" : "infeasible", out.smem, out.feasible ? "" : ": ",
             out.feasible ? "" : out.reason);
  }
  cJSON_Delete(doc);
  return 0;
}

void ks_detail_print(const cost_hw *hw, const ks_shape *s, int n, const char *set) {
  static cost_kpred out[KS_MAX_CFG];
  for (int i = 0; i < n; i++) {
    int nf = 0, bi = 0;
    if (cost_kernel_rank(hw, &s[i].p, s[i].cfg, s[i].n, out, &nf) || !nf) continue;
    for (int j = 1; j < s[i].n; j++)
      if (s[i].ms[j] < s[i].ms[bi]) bi = j;
    double chosen = NAN;
    for (int j = 0; j < s[i].n; j++)
      if (!memcmp(&s[i].cfg[j], &out[0].cfg, sizeof(cost_kcfg))) chosen = s[i].ms[j];
    const cost_kcfg *c = &out[0].cfg, *b = &s[i].cfg[bi];
    printf("%-8s %6lld %6lld %6lld %-2s %-4s eff %.3f chose %3dx%3dx%3d w%d s%d k%d (pred %.4f "
           "meas %.4f) best %3dx%3dx%3d w%d s%d k%d %.4f\n",
           set, (long long)s[i].p.m, (long long)s[i].p.n, (long long)s[i].p.k,
           s[i].p.layout[0] ? s[i].p.layout : "nn", cost_dtype_name((cost_dtype)s[i].p.dtype),
           s[i].ms[bi] / chosen, c->block_m, c->block_n, c->block_k, c->num_warps, c->num_stages,
           c->split_k > 1 ? c->split_k : 1, out[0].ms, chosen, b->block_m, b->block_n, b->block_k,
           b->num_warps, b->num_stages, b->split_k > 1 ? b->split_k : 1, s[i].ms[bi]);
  }
}
