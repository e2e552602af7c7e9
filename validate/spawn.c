/* Processes and files for the backends. Programs start with posix_spawnp
 * from argv arrays (never a shell); every descriptor we open is O_CLOEXEC
 * so that a job spawned from one server thread does not inherit another
 * request's pipe. Each runner gets its own process group so that a kill
 * reaches whatever it started (compiler workers). */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "validate/validate_int.h"

extern char **environ;

static int open_or_null(const char *path, int flags) {
  return open(path ? path : "/dev/null", flags | O_CLOEXEC, 0600);
}

int val_spawn(const char *const *argv, const char *out_path, const char *err_path, pid_t *pid,
              svc_err *err) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  int in = -1, out = -1, er = -1, rc = 0, e;
  in = open_or_null(NULL, O_RDONLY);
  out = open_or_null(out_path, O_WRONLY | O_CREAT | O_TRUNC);
  er = open_or_null(err_path, O_WRONLY | O_CREAT | O_TRUNC);
  if (in < 0 || out < 0 || er < 0) {
    rc = svc_err_set(err, SVC_IO, "", "cannot open the job's output files: %s", strerror(errno));
    goto cleanup;
  }
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&fa, in, 0);
  posix_spawn_file_actions_adddup2(&fa, out, 1);
  posix_spawn_file_actions_adddup2(&fa, er, 2);
  posix_spawnattr_setpgroup(&attr, 0);
  /* The server may ignore SIGPIPE or block signals; the job starts clean. */
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  e = posix_spawnp(pid, argv[0], &fa, &attr, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (e) rc = svc_err_set(err, SVC_IO, "", "cannot start %s: %s", argv[0], strerror(e));
cleanup:
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  if (er >= 0) close(er);
  return rc;
}

/* Wait for pid until deadline (monotonic seconds); 1 reaped, 0 not yet. */
static int reap_until(pid_t pid, double deadline, int *status) {
  for (;;) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return 1;
    if (svc_now() >= deadline) return 0;
    usleep(10000);
  }
}

int val_run(const char *const *argv, double timeout_s, char *out, size_t outsz, int *status,
            svc_err *err) {
  posix_spawn_file_actions_t fa;
  int fds[2] = {-1, -1}, rc = 0, e, st = 0;
  size_t n = 0;
  pid_t pid = 0;
  double deadline = svc_now() + timeout_s;
  out[0] = '\0';
  if (pipe2(fds, O_CLOEXEC)) return svc_err_set(err, SVC_IO, "", "pipe: %s", strerror(errno));
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  e = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (e) {
    rc = svc_err_set(err, SVC_UNAVAILABLE, "", "cannot run %s: %s", argv[0], strerror(e));
    goto cleanup;
  }
  /* Read until EOF or the deadline; the pipe is bounded by outsz, and the
   * rest is drained and dropped so the child never blocks on a full pipe. */
  for (;;) {
    struct pollfd p = {.fd = fds[0], .events = POLLIN};
    int left = (int)((deadline - svc_now()) * 1000);
    if (left <= 0) break;
    int pr = poll(&p, 1, left);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) break;
    char sink[4096];
    char *dst = n + 1 < outsz ? out + n : sink;
    size_t room = n + 1 < outsz ? outsz - 1 - n : sizeof sink;
    ssize_t got = read(fds[0], dst, room);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (dst != sink) n += (size_t)got;
  }
  out[n] = '\0';
  if (!reap_until(pid, deadline, &st)) {
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    rc = svc_err_set(err, SVC_UNAVAILABLE, "", "%s did not finish within %.0f s", argv[0],
                     timeout_s);
    goto cleanup;
  }
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
cleanup:
  close(fds[0]);
  return rc;
}

int64_t val_proc_start(pid_t pid, int *zombie) {
  char path[64], buf[1024];
  FILE *f;
  size_t n;
  if (zombie) *zombie = 0;
  if (pid <= 0) return 0;
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  if (!(f = fopen(path, "re"))) return 0;
  n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  /* The command name may hold spaces and ')': fields restart after the
   * last ')'. Then: state (3), ... starttime is field 22. */
  char *p = strrchr(buf, ')');
  if (!p) return 0;
  p += 2;
  if (zombie) *zombie = *p == 'Z' || *p == 'X';
  for (int field = 3; field < 22 && p; field++) {
    p = strchr(p, ' ');
    if (p) p++;
  }
  return p ? strtoll(p, NULL, 10) : 0;
}

void val_proc_signal(pid_t pid, int64_t start, int sig) {
  if (pid <= 0) return;
  int64_t now = val_proc_start(pid, NULL);
  if (now == 0 || (start && now != start)) return;
  if (kill(-pid, sig) && errno == ESRCH) kill(pid, sig);
}

int val_write_file(const char *path, const char *data, size_t len, int mode, svc_err *err) {
  char tmp[PATH_MAX];
  int fd = -1, rc = 0;
  if (snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid()) >= (int)sizeof tmp)
    return svc_err_set(err, SVC_IO, "", "path too long: %s", path);
  fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return svc_err_set(err, SVC_IO, "", "cannot write %s: %s", tmp, strerror(errno));
  for (size_t off = 0; off < len;) {
    ssize_t w = write(fd, data + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      rc = svc_err_set(err, SVC_IO, "", "cannot write %s: %s", tmp, strerror(errno));
      goto cleanup;
    }
    off += (size_t)w;
  }
  /* open() applied the umask; the mode asked for is what the file gets. */
  if (fchmod(fd, (mode_t)mode) || close(fd)) {
    fd = -1;
    rc = svc_err_set(err, SVC_IO, "", "cannot write %s: %s", tmp, strerror(errno));
    goto cleanup;
  }
  fd = -1;
  if (rename(tmp, path))
    rc = svc_err_set(err, SVC_IO, "", "cannot rename to %s: %s", path, strerror(errno));
cleanup:
  if (fd >= 0) close(fd);
  if (rc) unlink(tmp);
  return rc;
}

char *val_read_tail(const char *path, size_t max) {
  FILE *f = fopen(path, "rbe");
  char *buf = calloc(1, max + 1);
  size_t n = 0;
  if (!buf) goto cleanup;
  if (!f) goto cleanup;
  if (fseek(f, 0, SEEK_END) == 0) {
    long size = ftell(f);
    long from = size > (long)max ? size - (long)max : 0;
    if (fseek(f, from, SEEK_SET) == 0) n = fread(buf, 1, max, f);
    buf[n] = '\0';
    /* Drop a cut first line and trailing newlines. */
    if (from > 0) {
      char *nl = strchr(buf, '\n');
      if (nl) memmove(buf, nl + 1, strlen(nl + 1) + 1);
    }
    for (size_t k = strlen(buf); k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == '\r'); k--)
      buf[k - 1] = '\0';
  }
cleanup:
  if (f) fclose(f);
  return buf;
}

int val_mkdirs(const char *path, svc_err *err) {
  char buf[PATH_MAX];
  if (svc_strlcpy(buf, path, sizeof buf))
    return svc_err_set(err, SVC_IO, "", "path too long: %s", path);
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || *p == '\0') {
      char c = *p;
      *p = '\0';
      if (mkdir(buf, 0700) && errno != EEXIST)
        return svc_err_set(err, SVC_IO, "", "cannot create %s: %s", buf, strerror(errno));
      *p = c;
      if (!c) break;
    }
  }
  return 0;
}

int val_join(char *buf, size_t size, const char *dir, const char *name) {
  int n = snprintf(buf, size, "%s/%s", dir, name);
  return n < 0 || (size_t)n >= size ? -1 : 0;
}
