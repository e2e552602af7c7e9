/* common/sha256.c against the FIPS 180-2 example vectors (appendix B) and
 * the padding edges (55, 56, 63, 64 bytes: one or two final blocks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/common.h"

static void check(const char *msg, size_t len, const char *want) {
  char hex[65];
  svc_sha256_hex(msg, len, hex);
  assert_string_equal(hex, want);
}

static void test_sha256__fips_180_2_vectors(void **state) {
  check("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  check(two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  size_t n = 1000000;
  char *a = malloc(n);
  assert_non_null(a);
  memset(a, 'a', n);
  check(a, n, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(a);
}

static void test_sha256__empty_and_padding_edges(void **state) {
  check("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  char buf[64];
  memset(buf, 'a', sizeof buf);
  /* Reference digests from coreutils sha256sum of 'a' repeated n times. */
  check(buf, 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  check(buf, 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  check(buf, 63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
  check(buf, 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sha256__fips_180_2_vectors),
      cmocka_unit_test(test_sha256__empty_and_padding_edges),
  };
  return cmocka_run_group_tests_name("sha256", tests, NULL, NULL);
}
