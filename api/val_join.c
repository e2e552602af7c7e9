/* Finding a validation case's result row: a hash join (see the comment
 * below); the report in api/validations.c asks val_find_row per case.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/val_join_int.h"

static int row_matches(const cJSON *row, const cJSON *match) {
  const cJSON *m;
  cJSON_ArrayForEach(m, match) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, m->string);
    if (!v || !cJSON_Compare(v, m, 1)) return 0;
  }
  return 1;
}

/* ---- finding a case's row: a hash join ----
 * Case i is compared with the first row that row_matches its "match" (else
 * with row i). Scanning the rows for every case is cases x rows (20,000 x
 * 500,000 held a worker for minutes), so the rows are indexed once per
 * distinct set of match member names (a job's cases normally share one):
 * each row's values of those members are printed canonically into a key,
 * and rows with equal keys are chained in row order. A case's key finds
 * its chain and the first row there that row_matches is the answer.
 *
 * The key is a filter, never the judge: whatever two values cJSON_Compare
 * calls equal print the same key (object members sorted and taken as
 * cJSON_GetObjectItemCaseSensitive sees them, numbers at 12 significant
 * digits, which absorbs Compare's epsilon), and row_matches then checks
 * the candidates, so the answers are the scan's. */

static void kput(val_kbuf *b, const char *p, size_t n) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + n + 1) cap *= 2;
    char *g = realloc(b->s, cap);
    if (!g) {
      b->oom = 1;
      return;
    }
    b->s = g;
    b->cap = cap;
  }
  memcpy(b->s + b->len, p, n);
  b->len += n;
  b->s[b->len] = '\0';
}

/* A string as "<len>:bytes", so that no escaping is needed. */
static void kstr(val_kbuf *b, const char *s) {
  char n[24];
  size_t len = s ? strlen(s) : 0;
  snprintf(n, sizeof n, "%zu:", len);
  kput(b, n, strlen(n));
  kput(b, s ? s : "", len);
}

static int by_name(const void *a, const void *b) {
  return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* The members of obj that cJSON_GetObjectItemCaseSensitive finds (the
 * first of each name), sorted by name; malloc'd, NULL when empty or out of
 * memory (*n = 0 only for empty). */
static const cJSON **members(const cJSON *obj, size_t *n) {
  size_t cnt = 0, k = 0;
  const cJSON *m;
  *n = 0;
  cJSON_ArrayForEach(m, obj) cnt++;
  if (!cnt) return NULL;
  const cJSON **v = malloc(cnt * sizeof *v);
  if (!v) {
    *n = (size_t)-1;
    return NULL;
  }
  cJSON_ArrayForEach(m, obj) {
    if (m->string && cJSON_GetObjectItemCaseSensitive(obj, m->string) == m) v[k++] = m;
  }
  qsort(v, k, sizeof *v, by_name);
  *n = k;
  return v;
}

static void kval(val_kbuf *b, const cJSON *v, int depth) {
  char num[40];
  if (depth > 32 || !v) { /* deeper than any match we print: one bucket */
    kput(b, "?", 1);
  } else if (cJSON_IsNumber(v)) {
    double d = v->valuedouble;
    if (d > -1e15 && d < 1e15 && d == (double)(long long)d)
      snprintf(num, sizeof num, "d%lld;", (long long)d);
    else
      snprintf(num, sizeof num, "d%.12g;", d);
    kput(b, num, strlen(num));
  } else if (cJSON_IsString(v) || cJSON_IsRaw(v)) {
    kput(b, cJSON_IsString(v) ? "s" : "r", 1);
    kstr(b, v->valuestring);
  } else if (cJSON_IsArray(v)) {
    const cJSON *it;
    kput(b, "[", 1);
    cJSON_ArrayForEach(it, v) kval(b, it, depth + 1);
    kput(b, "]", 1);
  } else if (cJSON_IsObject(v)) {
    size_t n = 0;
    const cJSON **m = members(v, &n);
    if (n == (size_t)-1) b->oom = 1;
    kput(b, "{", 1);
    for (size_t i = 0; m && i < n; i++) {
      kstr(b, m[i]->string);
      kval(b, m[i], depth + 1);
    }
    kput(b, "}", 1);
    free(m);
  } else {
    kput(b, cJSON_IsTrue(v) ? "t" : cJSON_IsFalse(v) ? "f" : "n", 1);
  }
}

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

/* The key of obj's values for names (m, n sorted members of a match) into
 * b; 0 when obj lacks one of them (no such row can match). */
static int key_of(const cJSON *obj, const cJSON *const *m, size_t n, val_kbuf *b) {
  b->len = 0;
  kput(b, "", 0);
  for (size_t i = 0; i < n; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, m[i]->string);
    if (!v) return 0;
    kval(b, v, 0);
  }
  return 1;
}

/* The slot holding key, or the empty one where it would go (the table is
 * at most half full, so the probe ends). */
static val_kslot *slot_for(val_kindex *x, const char *key, uint64_t h) {
  size_t i = (size_t)h & (x->nslots - 1);
  while (x->slots[i].key && (x->slots[i].hash != h || strcmp(x->slots[i].key, key)))
    i = (i + 1) & (x->nslots - 1);
  return &x->slots[i];
}

/* Index the rows for the names of match (m, n); 0 or -1 (out of memory). */
static int index_rows(val_joiner *j, val_kindex *x, const cJSON *const *m, size_t n, val_kbuf *b) {
  int *tail = NULL, rc = -1;
  x->nslots = 16;
  while (x->nslots < (size_t)j->nrows * 2) x->nslots *= 2;
  x->slots = calloc(x->nslots, sizeof *x->slots);
  x->next = malloc(((size_t)j->nrows + 1) * sizeof *x->next);
  tail = malloc(x->nslots * sizeof *tail); /* per slot: its chain's last row */
  if (!x->slots || !x->next || !tail) goto cleanup;
  for (int r = 0; r < j->nrows; r++) {
    x->next[r] = -1;
    if (!key_of(j->rows[r], m, n, b)) continue;
    if (b->oom) goto cleanup;
    uint64_t h = fnv1a(b->s, b->len);
    val_kslot *s = slot_for(x, b->s, h);
    if (!s->key) {
      if (!(s->key = strdup(b->s))) goto cleanup;
      s->hash = h;
      s->head = r;
    } else {
      x->next[tail[s - x->slots]] = r;
    }
    tail[s - x->slots] = r;
  }
  rc = 0;
cleanup:
  free(tail);
  return rc;
}

void val_joiner_dispose(val_joiner *j) {
  for (int k = 0; k < j->nidx; k++) {
    for (size_t i = 0; j->idx[k].slots && i < j->idx[k].nslots; i++) free(j->idx[k].slots[i].key);
    free(j->idx[k].slots);
    free(j->idx[k].next);
    free(j->idx[k].names);
  }
  free(j->rows);
}

/* The row index of case i's row, -1 when none; -2 when out of memory. */
int val_find_row(val_joiner *j, const cJSON *match, int i, val_kbuf *b) {
  size_t n = 0;
  int found = -1;
  if (!match) return i < j->nrows ? i : -1;
  const cJSON **m = members(match, &n);
  if (n == (size_t)-1) return -2;
  /* The name set's own key picks (or makes) its index. */
  val_kbuf names = {0};
  for (size_t k = 0; k < n; k++) kstr(&names, m[k]->string);
  kput(&names, "", 0);
  val_kindex *x = NULL;
  for (int k = 0; k < j->nidx && !x; k++)
    if (!strcmp(j->idx[k].names, names.s)) x = &j->idx[k];
  if (!x && !names.oom && j->nidx < VAL_MAX_KEYSETS) {
    x = &j->idx[j->nidx++];
    x->names = names.s;
    names.s = NULL;
    if (index_rows(j, x, m, n, b)) found = -2;
  }
  if (found == -2 || names.oom) {
    found = -2;
  } else if (!x) { /* too many distinct name sets: scan */
    for (int r = 0; r < j->nrows && found < 0; r++)
      if (row_matches(j->rows[r], match)) found = r;
  } else if (key_of(match, m, n, b) && !b->oom) {
    val_kslot *s = slot_for(x, b->s, fnv1a(b->s, b->len));
    for (int r = s->key ? s->head : -1; r >= 0 && found < 0; r = x->next[r])
      if (row_matches(j->rows[r], match)) found = r;
  } else if (b->oom) {
    found = -2;
  }
  free(names.s);
  free(m);
  return found;
}
