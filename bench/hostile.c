/* bench/hostile: the two hostile-client figures of the hardening issue,
 * against the real `cdplan serve` binary on loopback (a fresh database in
 * a temporary folder):
 *  1. slowloris: 1100 connections from 127.0.0.1 trickling header bytes
 *     (one byte per connection per second) while /healthz is probed from
 *     127.0.0.2: probe latency median and max (target <= 100 ms);
 *  2. 40 connections each uploading a 16 MiB results body to an existing
 *     job without its token: the server's peak RSS (target <= 100 MiB),
 *     and the same with the job's valid token (bounded by the server's
 *     buffered-body cap, 64 MiB by default).
 * Prints a table and one JSON line. Needs the file limit raised (done
 * here up to the hard limit).
 * usage: hostile [PATH_TO_CDPLAN]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bench_cli.h"

extern char **environ;

#define SLOW_CONNS 1100
#define UPLOADS 40
#define UPLOAD_BYTES (16u << 20)

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int connect_from(int port, const char *src) {
  struct sockaddr_in a = {0}, b = {0};
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  b.sin_family = AF_INET;
  inet_pton(AF_INET, src, &b.sin_addr);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)&b, sizeof b) != 0 ||
      connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* One request on a fresh connection; the response (up to size) in buf;
 * returns its status or 0. */
static int request(int port, const char *src, const char *raw, char *buf, size_t size) {
  int fd = connect_from(port, src);
  if (fd < 0) return 0;
  size_t len = strlen(raw), got = 0;
  if (send(fd, raw, len, MSG_NOSIGNAL) != (ssize_t)len) {
    close(fd);
    return 0;
  }
  ssize_t n;
  struct pollfd p = {.fd = fd, .events = POLLIN};
  while (got + 1 < size && poll(&p, 1, 5000) > 0 &&
         (n = recv(fd, buf + got, size - 1 - got, 0)) > 0)
    got += (size_t)n;
  buf[got] = '\0';
  close(fd);
  return got > 12 && !strncmp(buf, "HTTP/1.1 ", 9) ? atoi(buf + 9) : 0;
}

static long rss_kib(pid_t pid) {
  char path[64], line[256];
  long kib = -1;
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "VmRSS:", 6)) kib = strtol(line + 6, NULL, 10);
  fclose(f);
  return kib;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Start `cdplan serve` on port 0; its port from the listening line. */
static pid_t start_server(const char *bin, const char *db, int *port) {
  int pfd[2];
  pid_t pid;
  if (pipe(pfd) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
  /* Its log (a line per refused connection at debug only) goes to a file. */
  char logp[160];
  snprintf(logp, sizeof logp, "%s.log", db);
  posix_spawn_file_actions_addopen(&fa, 2, logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addclose(&fa, pfd[0]);
  char *argv[] = {(char *)bin, "serve", "--listen", "127.0.0.1:0", "--db", (char *)db, NULL};
  int rc = posix_spawn(&pid, bin, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(pfd[1]);
  if (rc != 0) return -1;
  char line[256] = {0};
  size_t got = 0;
  struct pollfd p = {.fd = pfd[0], .events = POLLIN};
  while (got + 1 < sizeof line && !strchr(line, '\n') && poll(&p, 1, 10000) > 0) {
    ssize_t n = read(pfd[0], line + got, sizeof line - 1 - got);
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(pfd[0]);
  const char *c = strstr(line, "127.0.0.1:");
  *port = c ? atoi(c + 10) : 0;
  return *port ? pid : -1;
}

static void slowloris(int port, double *median_ms, double *max_ms, int *held) {
  static int fds[SLOW_CONNS];
  static const char head[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  double lat[40];
  int n = 0;
  for (int i = 0; i < SLOW_CONNS; i++) {
    fds[i] = connect_from(port, "127.0.0.1");
    if (fds[i] >= 0) {
      fcntl(fds[i], F_SETFL, O_NONBLOCK);
      send(fds[i], head, sizeof head - 1, MSG_NOSIGNAL);
    }
  }
  char buf[4096];
  for (int round = 0; round < 40; round++) {
    /* One byte per open connection per second (the trickle). */
    if (round % 4 == 0)
      for (int i = 0; i < SLOW_CONNS; i++)
        if (fds[i] >= 0 && send(fds[i], "a", 1, MSG_NOSIGNAL) != 1) {
          close(fds[i]);
          fds[i] = -1;
        }
    double t0 = now_s();
    int st =
        request(port, "127.0.0.2", "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                buf, sizeof buf);
    lat[n++] = st == 200 ? (now_s() - t0) * 1e3 : 1e9;
    usleep(250 * 1000);
  }
  /* Which are still open: a closed one reads EOF. */
  *held = 0;
  for (int i = 0; i < SLOW_CONNS; i++) {
    if (fds[i] < 0) continue;
    char b;
    ssize_t r = recv(fds[i], &b, 1, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) (*held)++;
    close(fds[i]);
  }
  qsort(lat, (size_t)n, sizeof *lat, cmp_double);
  *median_ms = lat[n / 2];
  *max_ms = lat[n - 1];
}

/* UPLOADS connections each start a 16 MiB results upload with token (a
 * header line or ""), and push as much of it as the server takes for
 * about 3 s; returns the server's peak RSS in KiB over that time and the
 * number of uploads the server answered early (refused). */
static long uploads(int port, pid_t server, long job, const char *token, int *refused) {
  static int fds[UPLOADS];
  static size_t sent[UPLOADS];
  static char chunk[65536];
  char head[512];
  memset(chunk, ' ', sizeof chunk);
  snprintf(head, sizeof head,
           "POST /v1/validations/%ld/results HTTP/1.1\r\nHost: x\r\nContent-Type: "
           "application/json\r\n%sContent-Length: %u\r\n\r\n",
           job, token, UPLOAD_BYTES);
  for (int i = 0; i < UPLOADS; i++) {
    char src[32];
    snprintf(src, sizeof src, "127.0.1.%d", i + 1);
    fds[i] = connect_from(port, src);
    sent[i] = 0;
    if (fds[i] >= 0) {
      send(fds[i], head, strlen(head), MSG_NOSIGNAL);
      fcntl(fds[i], F_SETFL, O_NONBLOCK);
    }
  }
  long peak = rss_kib(server);
  *refused = 0;
  double until = now_s() + 3.0;
  while (now_s() < until) {
    for (int i = 0; i < UPLOADS; i++) {
      size_t left = UPLOAD_BYTES - sent[i];
      ssize_t n = fds[i] >= 0 && left
                      ? send(fds[i], chunk, left < sizeof chunk ? left : sizeof chunk, MSG_NOSIGNAL)
                      : 0;
      if (n > 0) sent[i] += (size_t)n;
    }
    long r = rss_kib(server);
    if (r > peak) peak = r;
    usleep(10 * 1000);
  }
  for (int i = 0; i < UPLOADS; i++) {
    if (fds[i] < 0) continue;
    char b[64];
    ssize_t n = recv(fds[i], b, sizeof b - 1, MSG_DONTWAIT);
    if (n > 12 && (b[9] == '4' || b[9] == '5')) (*refused)++;
    close(fds[i]);
  }
  return peak;
}

int main(int argc, char **argv) {
  int cli = bench_cli(argc, argv, "[CDPLAN_BINARY]", "", 1);
  if (cli >= 0) return cli;
  const char *bin = argc > 1 ? argv[1] : CDPLAN_BIN;
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  signal(SIGPIPE, SIG_IGN);
  char dir[] = "/tmp/cdplan-hostile-XXXXXX", db[96], buf[8192];
  if (!mkdtemp(dir)) return 1;
  snprintf(db, sizeof db, "%s/bench.db", dir);
  int port = 0;
  pid_t pid = start_server(bin, db, &port);
  if (pid < 0) {
    fprintf(stderr, "hostile: cannot start %s serve\n", bin);
    return 1;
  }
  long rss0 = rss_kib(pid);
  double med = 0, max = 0;
  int held = 0;
  slowloris(port, &med, &max, &held);

  /* A job whose results are uploaded: a local CPU self-test that sleeps. */
  static const char job[] =
      "{\"kind\":\"cpu_selftest\",\"hardware\":\"h200\",\"backend\":\"local\","
      "\"params\":{\"n\":10,\"sleep_ms\":60000}}";
  char sub[512];
  snprintf(sub, sizeof sub,
           "POST /v1/validations HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: "
           "application/json\r\nContent-Length: %zu\r\n\r\n%s",
           sizeof job - 1, job);
  int st = request(port, "127.0.0.3", sub, buf, sizeof buf);
  const char *b = strstr(buf, "\r\n\r\n");
  const char *idp = b ? strstr(b, "\"id\":") : NULL, *tkp = b ? strstr(b, "\"token\":\"") : NULL;
  long id = idp ? strtol(idp + 5, NULL, 10) : 0;
  char tokhdr[160] = "";
  if (tkp) snprintf(tokhdr, sizeof tokhdr, "X-Job-Token: %.64s\r\n", tkp + 9);
  if (st != 201 || id <= 0 || !tkp) {
    fprintf(stderr, "hostile: submit failed (%d): %.300s\n", st, b ? b : buf);
    kill(pid, SIGKILL);
    return 1;
  }
  int refused_bad = 0, refused_good = 0;
  long rss_bad = uploads(port, pid, id, "X-Job-Token: 00000000\r\n", &refused_bad);
  usleep(500 * 1000);
  long rss_good = uploads(port, pid, id, tokhdr, &refused_good);

  kill(pid, SIGTERM);
  int ws = 0;
  waitpid(pid, &ws, 0);
  char rm[160];
  snprintf(rm, sizeof rm, "rm -rf %s", dir);
  if (system(rm) != 0) fprintf(stderr, "hostile: could not remove %s\n", dir);

  printf("hostile client (loopback, cdplan serve defaults)\n");
  printf("  %-58s %s\n", "figure", "value");
  printf("  %-58s %.1f / %.1f ms\n", "/healthz from 127.0.0.2 under 1100 trickling (median/max)",
         med, max);
  printf("  %-58s %d of %d\n", "trickling connections still open at the end", held, SLOW_CONNS);
  printf("  %-58s %.0f MiB\n", "server RSS at start", rss0 / 1024.0);
  printf("  %-58s %.0f MiB (%d answered 4xx/5xx)\n",
         "peak RSS, 40 x 16 MiB uploads, wrong job token", rss_bad / 1024.0, refused_bad);
  printf("  %-58s %.0f MiB (%d answered 4xx/5xx)\n",
         "peak RSS, 40 x 16 MiB uploads, the job's token", rss_good / 1024.0, refused_good);
  printf("{\"bench\":\"hostile\",\"healthz_median_ms\":%.2f,\"healthz_max_ms\":%.2f,"
         "\"slow_held\":%d,\"rss_start_mib\":%.1f,\"rss_bad_token_mib\":%.1f,"
         "\"rss_valid_token_mib\":%.1f,\"refused_bad\":%d,\"refused_valid\":%d}\n",
         med, max, held, rss0 / 1024.0, rss_bad / 1024.0, rss_good / 1024.0, refused_bad,
         refused_good);
  int ok = max <= 100 && rss_bad <= 100 * 1024;
  return ok ? 0 : 2;
}
