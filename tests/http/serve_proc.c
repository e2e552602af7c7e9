/* serve_proc.h: the `cdplan serve` child and the write stream of the
 * crash and replica tests. */
#include "serve_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http_fixture.h"

extern char **environ;

int serve_proc_start(const char *bin, const char *db, const char *errpath, int timeout_ms,
                     pid_t *pid, int *port) {
  int out[2];
  if (pipe(out) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
  char *argv[] = {(char *)bin, "serve",     "--listen", "127.0.0.1:0", "--db",
                  (char *)db,  "--threads", "2",        NULL};
  int rc = posix_spawn(pid, bin, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    return -1;
  }
  char line[256];
  size_t n = 0;
  struct pollfd p = {.fd = out[0], .events = POLLIN};
  while (n + 1 < sizeof line && !memchr(line, '\n', n) && poll(&p, 1, timeout_ms) == 1) {
    ssize_t got = read(out[0], line + n, sizeof line - 1 - n);
    if (got <= 0) break;
    n += (size_t)got;
  }
  close(out[0]);
  line[n] = '\0';
  const char *colon = strstr(line, "127.0.0.1:");
  *port = colon ? atoi(colon + 10) : 0;
  return *port > 0 ? 0 : -1;
}

int serve_proc_wait(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

int serve_writes_init(serve_writes *w) {
  memset(w, 0, sizeof *w);
  pthread_mutex_init(&w->lock, NULL);
  cJSON *d = fixture_descriptor("@NAME@");
  char *text = d ? fixture_print(d) : NULL;
  cJSON_Delete(d);
  char *at = text ? strstr(text, "@NAME@") : NULL;
  if (!at) {
    free(text);
    return -1;
  }
  *at = '\0';
  w->doc_prefix = strdup(text);
  w->doc_suffix = strdup(at + 6);
  free(text);
  return w->doc_prefix && w->doc_suffix ? 0 : -1;
}

void serve_writes_dispose(serve_writes *w) {
  pthread_mutex_destroy(&w->lock);
  free(w->doc_prefix);
  free(w->doc_suffix);
}

int serve_writes_post(serve_writes *w, int port) {
  static const char *const headers[] = {"Content-Type: application/json", NULL};
  pthread_mutex_lock(&w->lock);
  int i = w->next < SERVE_PROC_MAX_WRITES ? w->next++ : -1;
  pthread_mutex_unlock(&w->lock);
  if (i < 0) return -1;
  size_t cap = strlen(w->doc_prefix) + strlen(w->doc_suffix) + 32;
  char *body = malloc(cap);
  if (!body) return -1;
  int len = snprintf(body, cap, "%scrash-%d%s", w->doc_prefix, i, w->doc_suffix);
  http_resp r;
  int acked = 0;
  if (http_request(port, "POST", "/v1/hardware", headers, body, (size_t)len, &r) == 0) {
    if (r.status == 201) {
      pthread_mutex_lock(&w->lock);
      w->acked[i] = 1;
      w->nacked++;
      pthread_mutex_unlock(&w->lock);
      acked = 1;
    }
    http_resp_dispose(&r);
  }
  free(body);
  return acked;
}

void serve_writes_seen(unsigned char *seen, const char *name) {
  int i = atoi(name + 6);
  if (i >= 0 && i < SERVE_PROC_MAX_WRITES) seen[i] = 1;
}

int serve_writes_lost(const serve_writes *w, const unsigned char *seen) {
  int lost = 0;
  for (int i = 0; i < SERVE_PROC_MAX_WRITES; i++)
    if (w->acked[i] && !seen[i]) lost++;
  if (lost) fprintf(stderr, "%d of %d acknowledged writes lost\n", lost, w->nacked);
  return lost;
}
