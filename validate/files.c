/* The files a job is made of: job.json (the runner's input), Slurm's batch
 * script, and the bundle folder. The rule they keep: job data lives only
 * in job.json, as JSON with every string we add escaped; scripts are fixed
 * text plus single-quoted file paths. A path with a control character is
 * refused rather than quoted, so no script ever spans a surprising line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate/validate_int.h"

/* Append s to buf as a JSON string literal; buf must hold 6*strlen+3. */
static char *json_str(char *dst, const char *s) {
  *dst++ = '"';
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      *dst++ = '\\';
      *dst++ = (char)*p;
    } else if (*p < 0x20 || *p == 0x7f) {
      dst += sprintf(dst, "\\u%04x", *p);
    } else {
      *dst++ = (char)*p;
    }
  }
  *dst++ = '"';
  *dst = '\0';
  return dst;
}

char *val_job_json(const char *kind, int64_t id, const char *params) {
  size_t n = 6 * strlen(kind) + strlen(params) + 96;
  char *buf = malloc(n), *p;
  if (!buf) return NULL;
  p = buf + sprintf(buf, "{\"kind\":");
  p = json_str(p, kind);
  sprintf(p, ",\"id\":%lld,\"params\":%s}\n", (long long)id, params);
  return buf;
}

/* 'path' for sh: a single quote becomes '\''. NULL for control chars. */
static char *sh_quote(const char *s) {
  size_t n = strlen(s), q = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c == 0x7f) return NULL;
    q += c == '\'';
  }
  char *out = malloc(n + 3 * q + 3), *d = out;
  if (!out) return NULL;
  *d++ = '\'';
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\'') {
      memcpy(d, "'\\''", 4);
      d += 4;
    } else {
      *d++ = s[i];
    }
  }
  *d++ = '\'';
  *d = '\0';
  return out;
}

int val_write_script(const char *path, const char *python, const char *runner, const char *jobfile,
                     svc_err *err) {
  char *qp = sh_quote(python), *qr = sh_quote(runner), *qj = sh_quote(jobfile), *text = NULL;
  int rc = 0;
  if (!qp || !qr || !qj) {
    rc = svc_err_set(err, SVC_BAD_FIELD, "", "a job path holds a control character");
    goto cleanup;
  }
  size_t n = strlen(qp) + strlen(qr) + strlen(qj) + 512;
  if (!(text = malloc(n))) {
    rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    goto cleanup;
  }
  /* Slurm options travel on sbatch's argv, not as #SBATCH lines, so no
   * value ever has to be written into the script's header either. */
  snprintf(text, n,
           "#!/bin/sh\n"
           "# cdplan validation job, generated. Its parameters are in the JSON file\n"
           "# named below, never in this script.\n"
           "exec %s %s %s\n",
           qp, qr, qj);
  rc = val_write_file(path, text, strlen(text), 0700, err);
cleanup:
  free(qp);
  free(qr);
  free(qj);
  free(text);
  return rc;
}

static int copy_file(const char *from, const char *to, int mode, svc_err *err) {
  char *text = NULL;
  size_t len = 0;
  int rc = svc_read_file(from, 16u << 20, &text, &len, err);
  if (!rc) rc = val_write_file(to, text, len, mode, err);
  free(text);
  return rc;
}

static const char run_sh[] =
    "#!/bin/sh\n"
    "# cdplan validation bundle for job %lld. Run it on the GPU host (Python 3 with\n"
    "# PyTorch; cpu_selftest needs Python only), then bring result.json back:\n"
    "#   cdplan validate ingest result.json\n"
    "set -eu\n"
    "cd \"$(dirname \"$0\")\"\n"
    "python3 runner.py job.json > result.json.part\n"
    "mv result.json.part result.json\n"
    "echo \"cdplan: result in $(pwd)/result.json\" >&2\n";

int val_write_bundle(const char *dir, const char *runner, int64_t id, const char *job_json,
                     svc_err *err) {
  char path[PATH_MAX], src[PATH_MAX], script[sizeof run_sh + 32];
  int rc;
  if ((rc = val_mkdirs(dir, err))) return rc;
  if (val_join(path, sizeof path, dir, "job.json"))
    return svc_err_set(err, SVC_BAD_ARGS, "out", "path too long: %s", dir);
  if ((rc = val_write_file(path, job_json, strlen(job_json), 0644, err))) return rc;
  val_join(path, sizeof path, dir, "runner.py");
  if ((rc = copy_file(runner, path, 0755, err))) return rc;
  /* The modules runner.py imports (kernel_sweep's Triton kernel, the uvm
   * bag, transformer_step) are listed in MANIFEST beside it: a bundle
   * carries the whole package or is not written. */
  snprintf(src, sizeof src, "%s", runner);
  char *slash = strrchr(src, '/');
  size_t base = slash ? (size_t)(slash - src) + 1 : 0;
  if (base + sizeof "MANIFEST" > sizeof src)
    return svc_err_set(err, SVC_BAD_ARGS, "runner", "path too long: %s", runner);
  strcpy(src + base, "MANIFEST");
  char *man = NULL;
  size_t mlen = 0;
  if ((rc = svc_read_file(src, 1u << 16, &man, &mlen, err))) return rc;
  for (char *line = man, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    if (!*line || *line == '#') continue;
    if (strchr(line, '/') || base + strlen(line) + 1 > sizeof src) {
      rc = svc_err_set(err, SVC_INTERNAL, "runner", "bad MANIFEST entry '%s'", line);
      break;
    }
    strcpy(src + base, line);
    val_join(path, sizeof path, dir, line);
    if ((rc = copy_file(src, path, 0644, err))) break;
  }
  free(man);
  if (rc) return rc;
  snprintf(script, sizeof script, run_sh, (long long)id);
  val_join(path, sizeof path, dir, "run.sh");
  return val_write_file(path, script, strlen(script), 0755, err);
}
