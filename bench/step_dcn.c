/* bench/step_dcn.c: section (i) of bench/step_accuracy -- eager MLPerf-shaped
 * DLRM-DCNv2 steps of the blind sets in data/measurements/dcn-blind7 at the
 * model's default host and at the machine's own host, the mini route (each
 * case's mini step, the runner's host_mini, fitting host_op_us:
 * costmodel/step.c cost_step_host_mini; docs/step-model.md "The mini
 * route"). Each run file's cases come from its job file (cdplan's own
 * workload and recipe documents); the hardware from the run's device name.
 * blind8 is the blind score of record; blind7 is the set the serial
 * optimizer phase was chosen on, and its second run another host. Targets
 * (issue 21): median <= 10 %, max <= 20 %.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_meas.h"
#include "api/measure.h"
#include "bench/bench.h"

#define DCN_DIR "data/measurements/dcn-blind7/"
#define DCN_MAX 64

static cJSON *load_json(const char *path) {
  char *text = NULL;
  size_t len = 0;
  svc_err err;
  if (svc_read_file(path, 64u << 20, &text, &len, &err)) return NULL;
  cJSON *doc = cJSON_ParseWithLength(text, len);
  free(text);
  return doc;
}

/* The job's case labelled label, decoded into *w, *r: 0, or -1. */
static int job_case(const cJSON *job, const char *label, cost_workload *w, cost_recipe *r) {
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(job, "params"), "cases")) {
    const char *l = cJSON_GetStringValue(cJSON_GetObjectItem(c, "label"));
    if (!l || strcmp(l, label)) continue;
    char *text = cJSON_PrintUnformatted(c);
    svc_err err;
    int rc = text ? api_meas_case_decode(text, strlen(text), w, r, &err) : -1;
    free(text);
    return rc ? -1 : 0;
  }
  return -1;
}

/* One run: default-host and mini-route errors over its rows; prints them
 * and a JSON line. 0, or -1 when its files are absent or unreadable. */
static int dcn_run(api_ctx *ctx, const char *name, const char *run, const char *jobf,
                   const char *role) {
  char p1[256], p2[256];
  snprintf(p1, sizeof p1, DCN_DIR "%s", run);
  snprintf(p2, sizeof p2, DCN_DIR "%s", jobf);
  cJSON *res = load_json(p1), *job = load_json(p2);
  int rc = -1;
  if (!res || !job) goto out;
  const char *dev =
      cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(res, "device"), "name"));
  const char *hwname = dev && strstr(dev, "H200") ? "h200" : "h100-sxm";
  cost_hw hw;
  svc_err err;
  if (api_hw_lookup(ctx, hwname, 1, &hw, &err)) goto out;
  double ed[DCN_MAX], em[DCN_MAX];
  int n = 0;
  printf("  %s (%s, %s; %s)\n", name, run, dev ? dev : "?", role);
  const cJSON *row;
  cJSON_ArrayForEach(row, cJSON_GetObjectItem(res, "rows")) {
    const char *label = cJSON_GetStringValue(cJSON_GetObjectItem(row, "label"));
    const cJSON *hm = cJSON_GetObjectItem(row, "host_mini");
    double ms = cJSON_GetNumberValue(cJSON_GetObjectItem(row, "step_ms"));
    cost_workload w;
    cost_recipe r;
    cost_step_result d, m;
    if (!label || !hm || n >= DCN_MAX || job_case(job, label, &w, &r)) continue;
    double op = 0;
    int clamped = 0;
    int bad = cost_step(&hw, &w, &r, &d);
    r.host_mini_batch = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(hm, "batch"));
    r.host_mini_step_ms = cJSON_GetNumberValue(cJSON_GetObjectItem(hm, "step_ms"));
    bad = bad || cost_step_host_mini(&hw, &w, &r, &op, &clamped);
    r.host_op_us = op;
    bad = bad || cost_step(&hw, &w, &r, &m);
    api_workload_dispose(&w);
    if (bad || !(ms > 0)) continue;
    ed[n] = fabs(d.step_ms / ms - 1);
    em[n] = fabs(m.step_ms / ms - 1);
    printf("    %-46s meas %7.2f ms  default %+6.1f%%  mini %+6.1f%% (host_op_us %5.2f%s)\n", label,
           ms, 100 * (d.step_ms / ms - 1), 100 * (m.step_ms / ms - 1), op,
           clamped ? ", clamped" : "");
    n++;
  }
  if (!n) goto out;
  double dmax = bench_max(ed, n), mmax = bench_max(em, n);
  double dmed = bench_median(ed, n), mmed = bench_median(em, n);
  printf("  %s n=%d: default median %.1f%% max %.1f%% | mini route median %.1f%% max %.1f%%\n",
         name, n, 100 * dmed, 100 * dmax, 100 * mmed, 100 * mmax);
  printf("{\"bench\":\"step_accuracy\",\"section\":\"dcn_mini\",\"set\":\"%s\",\"hardware\":\"%s\","
         "\"role\":\"%s\",\"n\":%d,\"default\":{\"median\":%.4f,\"max\":%.4f},"
         "\"mini\":{\"median\":%.4f,\"max\":%.4f}}\n",
         name, hwname, role, n, dmed, dmax, mmed, mmax);
  rc = 0;
out:
  cJSON_Delete(res);
  cJSON_Delete(job);
  return rc;
}

int bench_dcn(api_ctx *ctx) {
  printf("\n(i) eager MLPerf-shaped DCN steps, default host and the mini route (%s)\n", DCN_DIR);
  static const char *const runs[][4] = {
      {"blind8", "blind8.json", "blind8_job.json", "blind, of record"},
      {"blind7", "blind7.json", "blind7_job.json", "seen: the serial phase was chosen on it"},
      {"blind7 run 2", "blind7_run2.json", "blind7_job.json", "seen cases, another host"},
      {"blind8 run 2", "blind8_run2.json", "blind8_job.json", "seen cases, another lease"},
  };
  int any = 0;
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
    any |= dcn_run(ctx, runs[i][0], runs[i][1], runs[i][2], runs[i][3]) == 0;
  if (!any) printf("  no run files\n");
  return any ? 0 : 1;
}
