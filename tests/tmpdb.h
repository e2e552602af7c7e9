/* The SQLite file of one test: a fresh name under /tmp and its removal
 * with the WAL and shared-memory files SQLite leaves beside it. Header
 * only (static inline) so that any test can use it without a link line. */
#ifndef CDPLAN_TESTS_TMPDB_H
#define CDPLAN_TESTS_TMPDB_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* path = "/tmp/cdplan-<tag>-XXXXXX" made unique by mkstemp, then removed
 * so that the store creates it. */
static inline void tmpdb_name(char *path, size_t size, const char *tag) {
  snprintf(path, size, "/tmp/cdplan-%s-XXXXXX", tag);
  int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  unlink(path);
}

/* Removes path, path-wal and path-shm (any of them may be absent). */
static inline void tmpdb_remove(const char *path) {
  char p[320];
  unlink(path);
  snprintf(p, sizeof p, "%s-wal", path);
  unlink(p);
  snprintf(p, sizeof p, "%s-shm", path);
  unlink(p);
}

#endif
