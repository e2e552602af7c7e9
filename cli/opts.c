/* opts.c: the command line's shared option handling (getopt_long):
 *  - global options before the command (`cdplan --db=x.db plan req.json`,
 *    `cdplan --server http://host:8080 plan req.json`);
 *  - `--name=value` accepted everywhere: split into `--name value` before a
 *    command that reads its own options sees argv;
 *  - the common options of the simple commands anywhere among their
 *    arguments (--db, --hw, --module, --help).
 * A mistake is exit 2 with the error document (cli_fail). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static int usage(const char *what, const char *arg) {
  svc_err err;
  svc_err_set(&err, SVC_BAD_ARGS, "", "%s%s (see cdplan --help)", what, arg ? arg : "");
  return cli_fail(&err);
}

/* getopt's own message is off; this names the option it stopped at. */
static int bad_option(char **argv, int opt) {
  const char *a = optind > 0 ? argv[optind - 1] : "";
  if (opt == ':') return usage("a value is needed after ", a);
  return usage("unknown option ", a);
}

enum { OPT_DB = 1000, OPT_HW, OPT_MODULE, OPT_VERSION, OPT_SERVER };

int cli_opts_global(int argc, char **argv, cli_opts *o, int *first, int *help, int *version) {
  static const struct option longs[] = {
      {"db", required_argument, NULL, OPT_DB},         {"hw", required_argument, NULL, OPT_HW},
      {"server", required_argument, NULL, OPT_SERVER}, {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, OPT_VERSION},     {NULL, 0, NULL, 0}};
  int c;
  optind = 0; /* glibc: a full re-initialisation */
  opterr = 0;
  /* "+": stop at the first word that is not an option (the command) */
  while ((c = getopt_long(argc, argv, "+:h", longs, NULL)) != -1) {
    if (c == OPT_DB)
      o->db = optarg;
    else if (c == OPT_HW)
      o->hw = optarg;
    else if (c == OPT_SERVER)
      o->server = optarg;
    else if (c == 'h')
      *help = 1;
    else if (c == OPT_VERSION)
      *version = 1;
    else
      return bad_option(argv, c);
  }
  *first = optind;
  return 0;
}

int cli_opts_split(int argc, char **argv, char ***out) {
  char **v = calloc((size_t)argc * 2 + 1, sizeof *v);
  int n = 0;
  if (!v) return -1;
  for (int i = 0; i < argc; i++) {
    char *eq = i > 0 && strncmp(argv[i], "--", 2) == 0 ? strchr(argv[i], '=') : NULL;
    if (eq && eq > argv[i] + 2) {
      *eq = '\0'; /* argv's strings are ours to edit */
      v[n++] = argv[i];
      v[n++] = eq + 1;
    } else {
      v[n++] = argv[i];
    }
  }
  *out = v;
  return n;
}

int cli_opts_common(int argc, char **argv, cli_opts *o, int *help, char ***rest, int *nrest) {
  static const struct option longs[] = {{"db", required_argument, NULL, OPT_DB},
                                        {"hw", required_argument, NULL, OPT_HW},
                                        {"module", required_argument, NULL, OPT_MODULE},
                                        {"help", no_argument, NULL, 'h'},
                                        {NULL, 0, NULL, 0}};
  char **v = calloc((size_t)argc + 2, sizeof *v), **pos = NULL;
  int c, n = 0, rc = 0;
  if (!v || !(pos = calloc((size_t)argc + 1, sizeof *pos))) {
    free(v);
    return -1;
  }
  /* getopt_long permutes its argv: work on a copy behind a program name */
  v[0] = "cdplan";
  memcpy(v + 1, argv, (size_t)argc * sizeof *v);
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc + 1, v, ":h", longs, NULL)) != -1) {
    if (c == OPT_DB) {
      o->db = optarg;
    } else if (c == OPT_HW) {
      o->hw = optarg;
    } else if (c == OPT_MODULE) {
      o->module = optarg;
    } else if (c == 'h') {
      *help = 1;
    } else {
      rc = bad_option(v, c);
      break;
    }
  }
  if (!rc)
    for (int i = optind; i < argc + 1; i++) pos[n++] = v[i];
  free(v);
  if (rc) {
    free(pos);
    return rc;
  }
  *rest = pos;
  *nrest = n;
  return 0;
}
