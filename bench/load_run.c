/* bench/load_run: runs bench/load.sh against this build's cdplan, so that
 * the shell bench takes part in `make bench` like the others (the bench
 * target runs executables). */
#include <stdio.h>
#include <unistd.h>

int main(void) {
  char *argv[] = {"sh", CDPLAN_LOAD_SH, CDPLAN_BIN, CDPLAN_SOURCE_DIR, NULL};
  execv("/bin/sh", argv);
  perror("load_run: /bin/sh");
  return 1;
}
