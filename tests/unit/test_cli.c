/* The cdplan binary as users run it: JSON on stdout, errors as JSON on
 * stderr with the documented exit statuses, --help on every subcommand,
 * requests from a file or stdin. Runs the real binary on a temp database. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/common.h"
#include "tests/tmpdb.h"

static char db[64];

typedef struct {
  int status;
  char *out, *err;
} run_result;

/* Run cdplan with argv (NULL-terminated, without the program), feeding
 * input (may be NULL) on stdin. */
static run_result run(const char *input, const char *const *args) {
  char outp[] = "/tmp/cdplan-cli-out-XXXXXX", errp[] = "/tmp/cdplan-cli-err-XXXXXX",
       inp[] = "/tmp/cdplan-cli-in-XXXXXX";
  int fo = mkstemp(outp), fe = mkstemp(errp), fi = mkstemp(inp);
  run_result r = {0};
  if (input) assert_int_equal(write(fi, input, strlen(input)), (ssize_t)strlen(input));
  lseek(fi, 0, SEEK_SET);
  const char *argv[32] = {CDPLAN_BIN};
  int n = 1;
  for (; args[n - 1] && n < 30; n++) argv[n] = args[n - 1];
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fi, 0);
    dup2(fo, 1);
    dup2(fe, 2);
    setenv("CDPLAN_DB", db, 1);
    execv(CDPLAN_BIN, (char *const *)argv);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  size_t len;
  svc_read_file(outp, 1 << 24, &r.out, &len, NULL);
  svc_read_file(errp, 1 << 24, &r.err, &len, NULL);
  close(fo);
  close(fe);
  close(fi);
  unlink(outp);
  unlink(errp);
  unlink(inp);
  return r;
}

static void done(run_result *r) {
  free(r->out);
  free(r->err);
}

static int setup(void **state) {
  (void)state;
  tmpdb_name(db, sizeof db, "cli-db");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tmpdb_remove(db);
  return 0;
}

static void test_cli__hw_list_and_show_from_seeded_db(void **state) {
  (void)state;
  run_result r = run(NULL, (const char *[]){"hw", "list", NULL});
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "\"name\":\"h200\""));
  done(&r);
  r = run(NULL, (const char *[]){"hw", "list", "amd", NULL});
  assert_int_equal(r.status, 0);
  assert_null(strstr(r.out, "\"vendor\":\"nvidia\""));
  done(&r);
  r = run(NULL, (const char *[]){"hw", "show", "h200", NULL});
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "\"compute_units\":132"));
  done(&r);
}

static void test_cli__errors_are_json_on_stderr(void **state) {
  (void)state;
  run_result r = run(NULL, (const char *[]){"hw", "show", "no-such-gpu", NULL});
  assert_int_equal(r.status, 1);
  assert_string_equal(r.out, "");
  assert_non_null(strstr(r.err, "{\"error\":{\"code\":\"not_found\""));
  done(&r);
  r = run(NULL, (const char *[]){"frobnicate", NULL});
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "\"code\":\"bad_args\""));
  done(&r);
  r = run(NULL, (const char *[]){"hw", "list", "--bogus", NULL});
  assert_int_equal(r.status, 2);
  done(&r);
  r = run("{\"name\": 5}", (const char *[]){"hw", "add", "-", NULL});
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "\"field\":\"name\""));
  done(&r);
  /* a missing input file is a command-line mistake: 2, not 3 */
  r = run(NULL, (const char *[]){"hw", "add", "/nonexistent/file.json", NULL});
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "\"code\":\"bad_args\""));
  assert_non_null(strstr(r.err, "/nonexistent/file.json"));
  done(&r);
  r = run(NULL, (const char *[]){"plan", "/nonexistent/plan.json", NULL});
  assert_int_equal(r.status, 2);
  done(&r);
  r = run(NULL, (const char *[]){"--db", NULL});
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "a value is needed after --db"));
  done(&r);
}

/* Every command that reads a file or folder named on its command line
 * treats a missing one (or a folder where a file belongs) as the
 * command-line mistake README documents (exit 2, bad_args naming the
 * path), not as our internal failure (3): calibrate, validate ingest,
 * hw import and serve --token-file read theirs outside cli_read_input;
 * serve --web names a folder that must exist (it served 404s silently). */
static void test_cli__missing_input_paths_exit_2_everywhere(void **state) {
  (void)state;
  static const char *const cmds[][8] = {
      {"calibrate", "--hw", "h200", "/nonexistent/m.json", NULL},
      {"calibrate", "--rows", "all", "/nonexistent/m.json", NULL},
      {"calibrate", "--hw", "h200", "--host-probe", "/nonexistent/m.json", NULL},
      {"calibrate", "--hw", "h200", "/tmp", NULL},
      {"validate", "ingest", "/nonexistent/m.json", NULL},
      {"hw", "import", "/nonexistent/m.json", NULL},
      {"serve", "--listen", "127.0.0.1:0", "--token-file", "/nonexistent/m.json", NULL},
      {"serve", "--listen", "127.0.0.1:0", "--web", "/nonexistent/m.json", NULL},
  };
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    run_result r = run(NULL, cmds[i]);
    if (r.status != 2) print_error("%s %s: exit %d, %s\n", cmds[i][0], cmds[i][1], r.status, r.err);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "\"code\":\"bad_args\""));
    assert_true(strstr(r.err, "/nonexistent/m.json") || strstr(r.err, "/tmp"));
    done(&r);
  }
}

/* An empty --db (as --db=$UNSET gives) is a command-line mistake: SQLite
 * would open a private temporary database for "", so a token created
 * there was printed, exit 0, and stored nowhere; serve would serve one
 * that vanishes at exit. */
static void test_cli__empty_db_path_is_exit_2(void **state) {
  (void)state;
  static const char *const cmds[][8] = {
      {"token", "create", "--scope", "admin", "--db=", NULL},
      {"--db", "", "hw", "list", NULL},
      {"serve", "--listen", "127.0.0.1:0", "--db=", NULL},
      {"calibrate", "--hw", "h200", "--db", "", "/dev/null", NULL},
      {"validate", "status", "--db=", NULL},
  };
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    run_result r = run(NULL, cmds[i]);
    if (r.status != 2) print_error("%s %s: exit %d, %s\n", cmds[i][0], cmds[i][1], r.status, r.err);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "\"field\":\"db\""));
    assert_null(strstr(r.out, "cdp_"));
    done(&r);
  }
}

/* serve's numeric options are checked whole and in range: "--rate abc"
 * (read as 0: no rate limit), "--timeout 0" (read as the 30 s default)
 * or "--threads 100000" were taken silently. Each case ends with a bad
 * --listen, so that a serve that took the option exits (with an error
 * about --listen) instead of serving. */
static void test_cli__serve_numeric_options_are_checked(void **state) {
  (void)state;
  static const char *const bad[][2] = {
      {"--rate", "abc"},          {"--rate", "-1"},          {"--rate", "5x"},
      {"--burst", "0"},           {"--threads", "100000"},   {"--max-conns", "0"},
      {"--timeout", "0"},         {"--timeout", "abc"},      {"--max-conns-per-ip", "0"},
      {"--header-timeout", "-1"}, {"--body-timeout", "1e9"}, {"--max-buffered-mib", "8x"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    run_result r =
        run(NULL, (const char *[]){"serve", bad[i][0], bad[i][1], "--listen", "127.0.0.1", NULL});
    if (r.status != 2 || !strstr(r.err, bad[i][0]))
      print_error("serve %s %s: exit %d, %s\n", bad[i][0], bad[i][1], r.status, r.err);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, bad[i][0]));
    done(&r);
  }
  /* in range: only the bad --listen is refused */
  run_result r = run(NULL, (const char *[]){"serve", "--rate", "2.5", "--burst", "40", "--threads",
                                            "0", "--timeout", "5", "--listen", "127.0.0.1", NULL});
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "ADDR:PORT"));
  done(&r);
}

/* getopt_long conventions: --name=value, global options before the
 * command, options after positional arguments. */
static void test_cli__getopt_long_conventions(void **state) {
  (void)state;
  char other[96], dbarg[112];
  snprintf(other, sizeof other, "%s-other", db);
  snprintf(dbarg, sizeof dbarg, "--db=%s", other);
  run_result r = run(NULL, (const char *[]){dbarg, "hw", "show", "mi350x", NULL});
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "\"name\":\"mi350x\""));
  done(&r);
  assert_int_equal(access(other, F_OK), 0); /* the global --db= made it */
  unlink(other);
  r = run(NULL, (const char *[]){"hw", "list", dbarg, "amd", NULL});
  assert_int_equal(r.status, 0);
  assert_null(strstr(r.out, "\"vendor\":\"nvidia\""));
  done(&r);
  assert_int_equal(access(other, F_OK), 0);
  unlink(other);
  r = run(NULL, (const char *[]){"--hw=h200", "hw", "show", NULL});
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "\"name\":\"h200\""));
  done(&r);
  r = run(NULL, (const char *[]){"--bogus", "hw", "list", NULL});
  assert_int_equal(r.status, 2);
  assert_non_null(strstr(r.err, "unknown option --bogus"));
  done(&r);
  r = run(NULL, (const char *[]){"--version", NULL});
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "cdplan "));
  done(&r);
}

static void test_cli__help_on_every_subcommand(void **state) {
  (void)state;
  const char *const cmds[][3] = {
      {"serve", "--help", NULL},       {"hw", "list", "--help"},   {"hw", "show", "--help"},
      {"hw", "add", "--help"},         {"hw", "import", "--help"}, {"estimate", "--help", NULL},
      {"calibrate", "--help", NULL},   {"--help", NULL, NULL},     {"export", "torchrec", "--help"},
      {"import", "torchrec", "--help"}};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    const char *args[4] = {cmds[i][0], cmds[i][1], cmds[i][2], NULL};
    run_result r = run(NULL, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Usage"));
    done(&r);
  }
}

static void test_cli__estimate_from_stdin_with_hw_override(void **state) {
  (void)state;
  const char *req = "{\"hardware\":\"mi300x\",\"ops\":[{\"op\":\"gemm\",\"m\":4096,\"n\":4096,"
                    "\"k\":4096,\"dtype\":\"bf16\"}]}";
  run_result r = run(req, (const char *[]){"estimate", "-", "--hw", "h200", NULL});
  assert_int_equal(r.status, 0);
  assert_non_null(strstr(r.out, "\"hardware\":\"h200\""));
  assert_non_null(strstr(r.out, "\"ms\":"));
  done(&r);
  r = run("{\"hardware\":\"h200\",\"ops\":[{\"op\":\"gemm\",\"m\":0,\"n\":1,\"k\":1}]}",
          (const char *[]){"estimate", "-", NULL});
  assert_int_equal(r.status, 1);
  assert_non_null(strstr(r.err, "\"field\":\"ops[0].m\""));
  done(&r);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
  const struct CMUnitTest tests[] = {
      T(test_cli__hw_list_and_show_from_seeded_db),
      T(test_cli__errors_are_json_on_stderr),
      T(test_cli__help_on_every_subcommand),
      T(test_cli__missing_input_paths_exit_2_everywhere),
      T(test_cli__empty_db_path_is_exit_2),
      T(test_cli__serve_numeric_options_are_checked),
      T(test_cli__getopt_long_conventions),
      T(test_cli__estimate_from_stdin_with_hw_override),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
