/* emb_choice.c: option choices for the decomposition's stage 2 (moved
 * out of emb_agg.c, issue 24): the LP's class counts rounded to one option
 * per table, and re-choices under a target T where a table's piece cannot
 * fit beside the uniform work. Pure functions of the instance; no packing
 * here (emb_pack.c, emb_eval.c do that).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/planner_int.h"

/* Integer counts per class by largest remainder, then one option per
 * table (the class's tables dealt out in index order). */
int emb_round_choice(const emb_inst *in, const int *ncol, const double *x, int *choice) {
  size_t *fill = calloc(in->nclass ? in->nclass : 1, sizeof *fill);
  long *cnt = malloc((size_t)in->nopt * sizeof *cnt);
  double *frac = malloc((size_t)in->nopt * sizeof *frac);
  size_t **members = calloc(in->nclass ? in->nclass : 1, sizeof *members);
  int rc = -1;
  if (!fill || !cnt || !frac || !members) goto cleanup;
  for (size_t c = 0; c < in->nclass; c++)
    if (!(members[c] = malloc(in->cls_count[c] * sizeof **members))) goto cleanup;
  for (size_t i = 0; i < in->n; i++) members[in->cls_of[i]][fill[in->cls_of[i]]++] = i;
  for (size_t c = 0; c < in->nclass; c++) {
    long total = 0, want = (long)in->cls_count[c];
    for (int o = 0; o < in->nopt; o++) {
      int col = ncol[c * (size_t)in->nopt + (size_t)o];
      double v = col >= 0 ? fmax(0, x[col]) : 0;
      cnt[o] = (long)floor(v + 1e-6);
      frac[o] = col >= 0 ? v - (double)cnt[o] : -1;
      total += cnt[o];
    }
    while (total < want) {
      int best = -1;
      for (int o = 0; o < in->nopt; o++)
        if (frac[o] >= 0 && (best < 0 || frac[o] > frac[best])) best = o;
      if (best < 0) goto cleanup;
      cnt[best]++, frac[best] = -0.5, total++;
    }
    while (total > want) { /* numerical excess: drop from the smallest remainder */
      int o = 0;
      while (o < in->nopt && cnt[o] == 0) o++;
      cnt[o]--, total--;
    }
    size_t q = 0;
    for (int o = 0; o < in->nopt; o++)
      for (long j = 0; j < cnt[o]; j++) choice[members[c][q++]] = o;
  }
  rc = 0;
cleanup:
  if (members)
    for (size_t c = 0; c < in->nclass; c++) free(members[c]);
  free(members), free(fill), free(cnt), free(frac);
  return rc;
}

double emb_total_ms(const emb_inst *in, const emb_opt *e) {
  double pcs = e->kind == EK_UNIFORM ? in->R : (e->kind == EK_NODE ? in->G : e->k);
  return e->ms * pcs;
}

/* Re-choose, from base, the option of every table whose piece cannot fit
 * under the target T (piece + fixed + uniform work > T): the cheapest
 * total among the options whose piece does fit (the smallest piece when
 * none does). With base == NULL every table takes its cheapest such
 * option. */
void emb_cap_choice(const emb_inst *in, const int *base, double T, int *choice) {
  double U = in->fixed_ms;
  if (base)
    for (size_t i = 0; i < in->n; i++) {
      const emb_opt *e = EOPT(in, i, base[i]);
      if (e->kind == EK_UNIFORM) U += e->ms;
    }
  /* without a base the uniform work is what the choices themselves put on
   * every rank: a second pass re-checks the pieces against it */
  for (int pass = 0; pass < (base ? 1 : 2); pass++) {
    double U2 = in->fixed_ms;
    for (size_t i = 0; i < in->n; i++) {
      if (base) {
        const emb_opt *e = EOPT(in, i, base[i]);
        if (e->kind == EK_UNIFORM || e->ms + U <= T) {
          choice[i] = base[i];
          continue;
        }
      }
      int best = -1, small = -1;
      for (int o = 0; o < in->nopt; o++) {
        const emb_opt *e = EOPT(in, i, o);
        if (!e->ok) continue;
        if (small < 0 || e->ms < EOPT(in, i, small)->ms) small = o;
        if (e->ms + (e->kind == EK_UNIFORM ? in->fixed_ms : U) > T) continue;
        if (best < 0 || emb_total_ms(in, e) < emb_total_ms(in, EOPT(in, i, best)) - 1e-12) best = o;
      }
      choice[i] = best >= 0 ? best : small;
      const emb_opt *c = EOPT(in, i, choice[i]);
      if (c->kind == EK_UNIFORM) U2 += c->ms;
    }
    if (!base) U = U2;
  }
}

/* As cap_choice, with the uniform work the re-chosen tables add counted:
 * a table whose piece cannot fit under T takes its cheapest-total option
 * whose piece does fit beside all the uniform work, a uniform option when
 * none does; repeated while the uniform work grows (it only grows). Where
 * cap_choice checked the pieces against the base's uniform work only, a
 * table moved to row-wise under a low T left every other piece too big
 * (heavy 300 x 512 seed 1: 278 of 290 tables repaired at every T). */
void emb_cap_choice_fixed(const emb_inst *in, const int *base, double T, int *choice) {
  if (base)
    memcpy(choice, base, in->n * sizeof *choice);
  else
    emb_cap_choice(in, NULL, INFINITY, choice);
  for (int pass = 0; pass < 8; pass++) {
    double U = in->fixed_ms;
    for (size_t i = 0; i < in->n; i++) {
      const emb_opt *e = EOPT(in, i, choice[i]);
      if (e->kind == EK_UNIFORM) U += e->ms;
    }
    int changed = 0;
    for (size_t i = 0; i < in->n; i++) {
      const emb_opt *e = EOPT(in, i, choice[i]);
      if (e->kind == EK_UNIFORM || e->ms + U <= T) continue;
      int best = -1, uni = -1;
      for (int o = 0; o < in->nopt; o++) {
        const emb_opt *x = EOPT(in, i, o);
        if (!x->ok) continue;
        if (x->kind == EK_UNIFORM) {
          if (uni < 0 || x->ms < EOPT(in, i, uni)->ms) uni = o;
        } else if (x->ms + U <= T &&
                   (best < 0 ||
                    emb_total_ms(in, x) < emb_total_ms(in, EOPT(in, i, best)) - 1e-12)) {
          best = o;
        }
      }
      if (best < 0) best = uni;
      if (best < 0) continue;
      changed |= best != choice[i];
      choice[i] = best;
      if (EOPT(in, i, best)->kind == EK_UNIFORM) U += EOPT(in, i, best)->ms;
    }
    if (!changed) break;
  }
}
