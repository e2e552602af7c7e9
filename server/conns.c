/* conns.c: per-connection deadlines and the global cap on buffered bodies.
 *
 * MHD's connection timeout is an idle timeout: a client that sends one
 * header byte every few seconds resets it for ever, so 1000 such
 * connections (slowloris) would hold every slot. Each connection here has
 * a phase with a deadline of its own:
 *   HEADER  from accept, or from the end of the previous request on a
 *           kept-alive connection, until the headers are complete
 *           (header_timeout_s);
 *   BODY    from the headers until the upload is complete (body_timeout_s);
 *   BUSY    while the handler runs and the reply is sent: no deadline (the
 *           server's own work is not the client's fault).
 * A reaper thread wakes a few times a second and shuts down (shutdown(2),
 * never close) the sockets whose deadline has passed; MHD then sees the
 * connection end and cleans it up as usual.
 *
 * Invariant: a record is in the list exactly between MHD's STARTED and
 * CLOSED notifications, and MHD closes the socket only after CLOSED
 * (MHD 0.9.75, daemon.c: notify_connection before MHD_socket_close_chk_),
 * so the reaper, which holds the lock while it calls shutdown, never
 * touches a descriptor number that was closed and reused.
 *
 * Buffered bodies: every byte a request buffers is counted in
 * s->buffered; a request whose declared or growing body would take the
 * total past max_buffered is refused (503 with Retry-After) instead of
 * being read, so that many concurrent large uploads cannot exhaust memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "server/server_int.h"

#define REAP_INTERVAL_MS 200

struct srv_conn {
  srv_conn *prev, *next;
  int fd;
  int phase;       /* SRV_PHASE_* */
  double deadline; /* svc_now() past which the socket is shut down; 0 = none */
  int reaped;      /* shut down once already */
};

/* The record MHD keeps for conn (NULL before STARTED or without one). */
static srv_conn *conn_of(struct MHD_Connection *conn) {
  const union MHD_ConnectionInfo *ci =
      conn ? MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT) : NULL;
  return ci ? ci->socket_context : NULL;
}

void srv_conn_phase(srv *s, struct MHD_Connection *conn, int phase) {
  srv_conn *c = conn_of(conn);
  if (!c) return;
  double now = svc_now();
  pthread_mutex_lock(&s->conns_lock);
  c->phase = phase;
  c->deadline = phase == SRV_PHASE_HEADER ? now + s->header_timeout_s
                : phase == SRV_PHASE_BODY ? now + s->body_timeout_s
                                          : 0;
  pthread_mutex_unlock(&s->conns_lock);
}

void srv_on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                       enum MHD_ConnectionNotificationCode toe) {
  srv *s = cls;
  if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
    srv_conn *c = calloc(1, sizeof *c);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    *socket_context = c;
    if (!c) return; /* no deadline for this one: MHD's idle timeout still holds */
    c->fd = ci ? ci->connect_fd : -1;
    c->phase = SRV_PHASE_HEADER;
    c->deadline = svc_now() + s->header_timeout_s;
    pthread_mutex_lock(&s->conns_lock);
    c->next = s->conns;
    if (s->conns) s->conns->prev = c;
    s->conns = c;
    pthread_mutex_unlock(&s->conns_lock);
    return;
  }
  srv_conn *c = *socket_context;
  *socket_context = NULL;
  if (!c) return;
  pthread_mutex_lock(&s->conns_lock);
  if (c->prev)
    c->prev->next = c->next;
  else
    s->conns = c->next;
  if (c->next) c->next->prev = c->prev;
  pthread_mutex_unlock(&s->conns_lock);
  free(c);
}

static void *reaper(void *p) {
  srv *s = p;
  pthread_mutex_lock(&s->conns_lock);
  while (!s->reaper_stop) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += REAP_INTERVAL_MS * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&s->reaper_cond, &s->conns_lock, &until);
    double now = svc_now();
    for (srv_conn *c = s->conns; c; c = c->next) {
      if (c->reaped || c->deadline <= 0 || now < c->deadline || c->fd < 0) continue;
      c->reaped = 1;
      atomic_fetch_add(&s->reaped, 1); /* counted before the client can see it */
      shutdown(c->fd, SHUT_RDWR);
    }
  }
  pthread_mutex_unlock(&s->conns_lock);
  return NULL;
}

int srv_conns_start(srv *s, svc_err *err) {
  if (pthread_create(&s->reaper, NULL, reaper, s) != 0)
    return svc_err_set(err, SVC_INTERNAL, "", "cannot start the connection reaper: %s",
                       strerror(errno));
  s->reaper_running = 1;
  return 0;
}

void srv_conns_stop(srv *s) {
  if (!s->reaper_running) return;
  pthread_mutex_lock(&s->conns_lock);
  s->reaper_stop = 1;
  pthread_cond_broadcast(&s->reaper_cond);
  pthread_mutex_unlock(&s->conns_lock);
  pthread_join(s->reaper, NULL);
  s->reaper_running = 0;
}

int srv_buffer_reserve(srv *s, size_t n) {
  size_t cur = atomic_load(&s->buffered);
  do {
    if (n > s->max_buffered || cur > s->max_buffered - n) return -1;
  } while (!atomic_compare_exchange_weak(&s->buffered, &cur, cur + n));
  return 0;
}

void srv_buffer_release(srv *s, size_t n) { atomic_fetch_sub(&s->buffered, n); }
