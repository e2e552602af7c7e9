/* bench/bench_cli.h: the command-line check every benchmark runs first --
 * `--help` / `-h` prints the usage and exits 0; an option the benchmark does
 * not know, an option missing its values, or more positional arguments than
 * it takes is refused with the usage and exit 2 (before, a bench read
 * `--help` as a file path and failed on it). Header-only so each bench
 * executable keeps its own source list (as bench_json.h).
 *
 * opts names the known options, blank-separated, each followed by ":N" when
 * it takes N values: "--heavy --time-limit:1 --case:3".
 */
#ifndef CDPLAN_BENCH_CLI_H
#define CDPLAN_BENCH_CLI_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many values option arg takes under opts, or -1 when opts lacks it. */
static inline int bench_cli_arity(const char *opts, const char *arg) {
  size_t n = strlen(arg);
  for (const char *p = opts; *p;) {
    while (*p == ' ') p++;
    size_t w = strcspn(p, " :");
    if (w == n && !strncmp(p, arg, n)) return p[w] == ':' ? atoi(p + w + 1) : 0;
    p += strcspn(p, " ");
  }
  return -1;
}

/* -1 when argv passes (the bench goes on); otherwise the exit code its main
 * returns: 0 after --help, 2 after a message on stderr. */
static inline int bench_cli(int argc, char **argv, const char *usage, const char *opts,
                            int max_positional) {
  const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
  int pos = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *why = NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("usage: %s %s\n", prog, usage);
      return 0;
    }
    if (a[0] == '-' && a[1]) {
      int k = bench_cli_arity(opts, a);
      if (k < 0)
        why = "unknown option";
      else if (i + k >= argc)
        why = "missing value for";
      else
        i += k;
    } else if (++pos > max_positional) {
      why = "unexpected argument";
    }
    if (why) {
      fprintf(stderr, "%s: %s %s\nusage: %s %s\n", prog, why, a, prog, usage);
      return 2;
    }
  }
  return -1;
}

#endif
