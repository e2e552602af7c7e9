/* A bundle job's folder as one ustar archive (POSIX.1-1988 ustar, as
 * pax(1) in IEEE Std 1003.1 describes it): GET /v1/validations/{id}/bundle
 * serves it, so a bundle made over the API reaches a GPU host as one file.
 * Only the folder's regular files (job.json, run.sh, runner.py and the
 * MANIFEST modules) go in, under one top folder cdplan-job-ID/, sorted by
 * name; each is a 512-byte header and its bytes padded to 512, and two
 * zero blocks end the archive. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "validate/validate_int.h"

#define BLOCK 512
#define MAX_FILES 64
#define MAX_FILE (8u << 20)

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One header: name (under 100 bytes), mode, size, mtime 0, typeflag '0',
 * "ustar\0" "00", and the checksum over the header with its own field
 * taken as spaces. */
static void header(unsigned char *h, const char *name, unsigned mode, size_t size) {
  unsigned sum = 0;
  memset(h, 0, BLOCK);
  size_t nl = strlen(name);
  memcpy(h, name, nl < 99 ? nl : 99); /* callers keep names under 100 bytes */
  snprintf((char *)h + 100, 8, "%07o", mode);
  snprintf((char *)h + 108, 8, "%07o", 0u);
  snprintf((char *)h + 116, 8, "%07o", 0u);
  snprintf((char *)h + 124, 12, "%011lo", (unsigned long)size);
  snprintf((char *)h + 136, 12, "%011o", 0u);
  h[156] = '0';
  memcpy(h + 257, "ustar", 6);
  memcpy(h + 263, "00", 2);
  memset(h + 148, ' ', 8);
  for (int i = 0; i < BLOCK; i++) sum += h[i];
  snprintf((char *)h + 148, 8, "%06o", sum);
  h[155] = ' ';
}

int val_bundle_tar(const char *dir, int64_t id, char **out, size_t *len, svc_err *err) {
  char *names[MAX_FILES], path[PATH_MAX], top[48], name[160];
  size_t n = 0, cap = 0, used = 0;
  unsigned char *buf = NULL;
  int rc = 0;
  DIR *d = opendir(dir);
  *out = NULL;
  *len = 0;
  if (!d) return svc_err_set(err, SVC_NOT_FOUND, "id", "the bundle's folder is gone");
  struct dirent *e;
  while ((e = readdir(d)) && !rc) {
    struct stat st;
    if (e->d_name[0] == '.' || val_join(path, sizeof path, dir, e->d_name) || lstat(path, &st) ||
        !S_ISREG(st.st_mode))
      continue;
    if (n == MAX_FILES || strlen(e->d_name) > 60)
      rc = svc_err_set(err, SVC_INTERNAL, "", "the bundle folder holds unexpected files");
    else if (!(names[n] = strdup(e->d_name)))
      rc = svc_err_set(err, SVC_NOMEM, "", NULL);
    else
      n++;
  }
  closedir(d);
  if (rc) goto cleanup;
  qsort(names, n, sizeof *names, by_name);
  snprintf(top, sizeof top, "cdplan-job-%lld/", (long long)id);
  for (size_t i = 0; i < n && !rc; i++) {
    char *data = NULL;
    size_t dlen = 0;
    struct stat st;
    val_join(path, sizeof path, dir, names[i]);
    if ((rc = svc_read_file(path, MAX_FILE, &data, &dlen, err))) break;
    size_t need = used + BLOCK + (dlen + BLOCK - 1) / BLOCK * BLOCK + 2 * BLOCK;
    if (need > cap) {
      size_t nc = cap ? cap : 1u << 16;
      while (nc < need) nc *= 2;
      unsigned char *g = realloc(buf, nc);
      if (!g) {
        free(data);
        rc = svc_err_set(err, SVC_NOMEM, "", NULL);
        break;
      }
      buf = g, cap = nc;
    }
    snprintf(name, sizeof name, "%s%s", top, names[i]);
    header(buf + used, name, stat(path, &st) == 0 && (st.st_mode & 0111) ? 0755u : 0644u, dlen);
    used += BLOCK;
    memcpy(buf + used, data, dlen);
    memset(buf + used + dlen, 0, (dlen + BLOCK - 1) / BLOCK * BLOCK - dlen);
    used += (dlen + BLOCK - 1) / BLOCK * BLOCK;
    free(data);
  }
  if (!rc && !buf) {
    rc = svc_err_set(err, SVC_NOT_FOUND, "id", "the bundle's folder is empty");
  } else if (!rc) {
    memset(buf + used, 0, 2 * BLOCK);
    *out = (char *)buf;
    *len = used + 2 * BLOCK;
    buf = NULL;
  }
cleanup:
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(buf);
  return rc;
}
