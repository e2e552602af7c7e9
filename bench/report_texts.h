/* bench/report_texts.h: the large-report shape shared by bench/report_join
 * and tests/validate/test_val_local: a prediction of n cases (the first
 * 1000 taken by position, the rest matched on {m, n}) and n measured rows
 * in reverse order (row i holds m = n-1-i, so case i >= 1000 matches row
 * n-1-i), with more members than the match keys (dtype, layout, k), as a
 * sweep's rows carry. Header only (static inline): no link line.
 */
#ifndef CDPLAN_BENCH_REPORT_TEXTS_H
#define CDPLAN_BENCH_REPORT_TEXTS_H

#include <cjson/cJSON.h>

#define REPORT_POSITIONAL 1000 /* cases matched by position */

/* *pred_text ({"cases":[...]}) and *rows_text ([...]) malloc'd compact
 * JSON (the caller frees both; NULL on OOM). */
static inline void report_texts(int n, char **pred_text, char **rows_text) {
  cJSON *pred = cJSON_CreateObject(), *cases = cJSON_AddArrayToObject(pred, "cases");
  cJSON *rows = cJSON_CreateArray();
  for (int i = 0; i < n; i++) {
    int m = n - 1 - i;
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "dtype", "bf16");
    cJSON_AddStringToObject(row, "layout", "tn");
    cJSON_AddNumberToObject(row, "k", 4096);
    cJSON_AddNumberToObject(row, "m", m);
    cJSON_AddNumberToObject(row, "n", m % 7);
    cJSON_AddNumberToObject(row, "ms", 1 + m);
    cJSON_AddItemToArray(rows, row);
    cJSON *c = cJSON_CreateObject();
    cJSON_AddNumberToObject(c, "value", 1 + i);
    if (i >= REPORT_POSITIONAL) {
      cJSON *mt = cJSON_AddObjectToObject(c, "match");
      cJSON_AddNumberToObject(mt, "m", i);
      cJSON_AddNumberToObject(mt, "n", i % 7);
    }
    cJSON_AddItemToArray(cases, c);
  }
  *pred_text = cJSON_PrintUnformatted(pred);
  *rows_text = cJSON_PrintUnformatted(rows);
  cJSON_Delete(pred);
  cJSON_Delete(rows);
}

#endif
