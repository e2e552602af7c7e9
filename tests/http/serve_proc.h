/* The real `cdplan serve` as a child process, for the tests that kill it
 * (tests/crash/test_crash_kill.c, tests/pg/test_replicas.c): start it on
 * 127.0.0.1 port 0 and learn the port, wait for its exit, and the stream
 * of POST /v1/hardware writes whose acknowledgements they count. */
#ifndef CDPLAN_TESTS_HTTP_SERVE_PROC_H
#define CDPLAN_TESTS_HTTP_SERVE_PROC_H

#include <pthread.h>
#include <sys/types.h>

/* Spawns `bin serve --listen 127.0.0.1:0 --db db --threads 2` (argv, no
 * shell) with stderr appended to errpath, and reads the port from its one
 * stdout line, waiting up to timeout_ms. 0 with *pid and *port set, or -1. */
int serve_proc_start(const char *bin, const char *db, const char *errpath, int timeout_ms,
                     pid_t *pid, int *port);
/* waitpid(pid) retried over EINTR: the wait status. */
int serve_proc_wait(pid_t pid);

#define SERVE_PROC_MAX_WRITES 20000

/* Writes of descriptors named crash-0, crash-1, ... shared by writer
 * threads; acked[i] is 1 once the server answered 201 to crash-i. */
typedef struct {
  volatile int stop;
  int next; /* next name number, under lock */
  unsigned char acked[SERVE_PROC_MAX_WRITES];
  int nacked;
  pthread_mutex_t lock;
  char *doc_prefix, *doc_suffix; /* the descriptor split around its name */
} serve_writes;

/* Initialises w (the descriptor from fixture_descriptor); 0 or -1. */
int serve_writes_init(serve_writes *w);
void serve_writes_dispose(serve_writes *w);
/* Posts the next name to port: 1 acknowledged (counted), 0 not, -1 when
 * the names are used up. */
int serve_writes_post(serve_writes *w, int port);
/* Marks in seen (SERVE_PROC_MAX_WRITES flags) the stored name crash-i. */
void serve_writes_seen(unsigned char *seen, const char *name);
/* How many acknowledged names seen lacks (said on stderr when any). */
int serve_writes_lost(const serve_writes *w, const unsigned char *seen);

#endif
