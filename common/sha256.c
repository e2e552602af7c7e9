/* SHA-256 (FIPS 180-4), self-contained, for hashing API tokens: only the
 * hash of a token is stored, so a copy of the database does not hand out
 * the right to call the service. Checked against the FIPS 180-2 example
 * vectors in tests/unit/test_sha256.c. Not constant-time in the length of
 * the input, which is fine for hashing secrets of a fixed size.
 */
#include <stdint.h>
#include <string.h>

#include "common/common.h"

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void compress(uint32_t h[8], const unsigned char *p) {
  uint32_t w[64], v[8];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
           (uint32_t)p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  memcpy(v, h, sizeof v);
  for (int i = 0; i < 64; i++) {
    uint32_t S1 = ROR(v[4], 6) ^ ROR(v[4], 11) ^ ROR(v[4], 25);
    uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
    uint32_t t1 = v[7] + S1 + ch + K[i] + w[i];
    uint32_t S0 = ROR(v[0], 2) ^ ROR(v[0], 13) ^ ROR(v[0], 22);
    uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
    uint32_t t2 = S0 + maj;
    memmove(v + 1, v, 7 * sizeof v[0]);
    v[4] += t1;
    v[0] = t1 + t2;
  }
  for (int i = 0; i < 8; i++) h[i] += v[i];
}

void svc_sha256(const void *data, size_t len, unsigned char out[32]) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const unsigned char *p = data;
  unsigned char tail[128];
  size_t full = len / 64 * 64, rest = len - full;
  for (size_t i = 0; i < full; i += 64) compress(h, p + i);
  /* Padding: 0x80, zeros, then the length in bits as 64-bit big endian. */
  memset(tail, 0, sizeof tail);
  if (rest) memcpy(tail, p + full, rest);
  tail[rest] = 0x80;
  size_t tlen = rest + 1 + 8 <= 64 ? 64 : 128;
  uint64_t bits = (uint64_t)len * 8;
  for (int i = 0; i < 8; i++) tail[tlen - 1 - i] = (unsigned char)(bits >> (8 * i));
  compress(h, tail);
  if (tlen == 128) compress(h, tail + 64);
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (unsigned char)(h[i] >> 24);
    out[4 * i + 1] = (unsigned char)(h[i] >> 16);
    out[4 * i + 2] = (unsigned char)(h[i] >> 8);
    out[4 * i + 3] = (unsigned char)h[i];
  }
}

void svc_sha256_hex(const void *data, size_t len, char out[65]) {
  static const char hex[] = "0123456789abcdef";
  unsigned char d[32];
  svc_sha256(data, len, d);
  for (int i = 0; i < 32; i++) {
    out[2 * i] = hex[d[i] >> 4];
    out[2 * i + 1] = hex[d[i] & 15];
  }
  out[64] = '\0';
}
