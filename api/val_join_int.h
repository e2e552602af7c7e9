/* Finding a validation case's result row (api/val_join.c): a hash join of
 * the prediction's cases on their "match" members against the result rows,
 * used by the predicted-against-measured report (api/validations.c). */
#ifndef CDPLAN_API_VAL_JOIN_INT_H
#define CDPLAN_API_VAL_JOIN_INT_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#define VAL_MAX_KEYSETS 8 /* distinct member-name sets indexed; more are scanned */

/* A growing key buffer; oom set once an allocation failed. */
typedef struct {
  char *s;
  size_t len, cap;
  int oom;
} val_kbuf;

typedef struct {
  char *key;
  uint64_t hash;
  int head; /* first row with this key; the rest follow next[] */
} val_kslot;

typedef struct {
  char *names;      /* the member-name set, as kstr pieces */
  val_kslot *slots; /* open addressing, power-of-two size */
  size_t nslots;
  int *next; /* per row: the next row with the same key, or -1 */
} val_kindex;

typedef struct {
  const cJSON **rows;
  int nrows;
  val_kindex idx[VAL_MAX_KEYSETS];
  int nidx;
} val_joiner;

/* The row index of case i's row (the first row whose members equal every
 * member of match; row i when match is NULL), -1 when none; -2 when out of
 * memory. b is scratch space the caller frees (b->s). */
int val_find_row(val_joiner *j, const cJSON *match, int i, val_kbuf *b);

/* Free what val_find_row indexed and j->rows. */
void val_joiner_dispose(val_joiner *j);

#endif
