/* ratelimit.c: token buckets keyed by client address and by API token.
 *
 * A bucket holds up to `burst` requests and refills at `rate` per second;
 * a request takes one or is refused with the seconds until one is back
 * (the Retry-After of the 429). Buckets live in a fixed table, so memory
 * does not grow with the number of clients: 4-way sets under a lock each,
 * a new key evicting its set's fullest (most idle) bucket. An evicted
 * bucket comes back full, which only favours a client when more than four
 * busy keys share one set of 1024; the table bounds memory, not fairness.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/server_int.h"

#define SETS 1024
#define WAYS 4
#define KEY_MAX 20

typedef struct {
  unsigned char key[KEY_MAX];
  unsigned char keylen; /* 0 = empty */
  double tokens, at;    /* tokens left as of time at (svc_now) */
} bucket;

struct srv_ratelimit {
  double rate, burst;
  pthread_mutex_t lock[SETS];
  bucket b[SETS][WAYS];
};

int srv_ratelimit_new(srv_ratelimit **out, double rate, double burst, svc_err *err) {
  *out = NULL;
  if (!(rate > 0)) return 0; /* off: srv_ratelimit_take on NULL always admits */
  srv_ratelimit *rl = calloc(1, sizeof *rl);
  if (!rl) return svc_err_set(err, SVC_NOMEM, "", NULL);
  rl->rate = rate;
  rl->burst = burst >= 1 ? burst : fmax(1, rate);
  for (size_t i = 0; i < SETS; i++) pthread_mutex_init(&rl->lock[i], NULL);
  *out = rl;
  return 0;
}

void srv_ratelimit_free(srv_ratelimit *rl) {
  if (!rl) return;
  for (size_t i = 0; i < SETS; i++) pthread_mutex_destroy(&rl->lock[i]);
  free(rl);
}

/* FNV-1a: keys are short and not attacker-chosen beyond their address. */
static size_t set_of(const unsigned char *k, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ k[i]) * 16777619u;
  return h % SETS;
}

unsigned srv_ratelimit_take(srv_ratelimit *rl, const void *key, size_t keylen, double now) {
  if (!rl || keylen == 0) return 0;
  if (keylen > KEY_MAX) keylen = KEY_MAX;
  size_t s = set_of(key, keylen);
  unsigned wait = 0;
  pthread_mutex_lock(&rl->lock[s]);
  bucket *set = rl->b[s], *hit = NULL, *victim = &set[0];
  double victim_level = -1;
  for (int w = 0; w < WAYS && !hit; w++) {
    bucket *b = &set[w];
    if (b->keylen == keylen && !memcmp(b->key, key, keylen)) {
      hit = b;
      break;
    }
    double level = b->keylen ? fmin(rl->burst, b->tokens + (now - b->at) * rl->rate) : 1e300;
    if (level > victim_level) {
      victim_level = level;
      victim = b;
    }
  }
  if (!hit) {
    hit = victim;
    memcpy(hit->key, key, keylen);
    hit->keylen = (unsigned char)keylen;
    hit->tokens = rl->burst;
    hit->at = now;
  }
  hit->tokens = fmin(rl->burst, hit->tokens + (now - hit->at) * rl->rate);
  hit->at = now;
  if (hit->tokens >= 1) {
    hit->tokens -= 1;
  } else {
    double secs = ceil((1 - hit->tokens) / rl->rate);
    wait = secs < 1 ? 1 : secs > 3600 ? 3600 : (unsigned)secs;
  }
  pthread_mutex_unlock(&rl->lock[s]);
  return wait;
}
