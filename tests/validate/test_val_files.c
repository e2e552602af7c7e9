/* The files a job is made of, with hostile names and values: quotes,
 * $(...), backticks, newlines, ../ in hardware names, params and paths.
 * The script must carry none of the job's values, must pass bash -n, and
 * running it must hand the runner exactly the paths it was written with
 * (which proves the quoting); job.json must parse back to the values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "hwdb/hwdb.h"
#include "validate/validate_int.h"

#define HOSTILE "a'b\"c$(touch PWNED)`touch PWNED2`;${HOME}|&>x\\ ../../e"

static char dir[128];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/cdplan-valfiles-XXXXXX");
  assert_non_null(mkdtemp(dir));
  assert_int_equal(chdir(dir), 0); /* PWNED files would land here */
  return 0;
}

static int teardown(void **state) {
  char rm[256];
  (void)state;
  assert_int_equal(chdir("/"), 0);
  snprintf(rm, sizeof rm, "rm -rf %s", dir); /* our own mkdtemp name: no quoting needed */
  return system(rm) == 0 ? 0 : -1;
}

static char *slurp(const char *path) {
  char *text = NULL;
  size_t len;
  assert_int_equal(svc_read_file(path, 1 << 20, &text, &len, NULL), 0);
  return text;
}

static void assert_no_pwned(void) {
  char p[256];
  snprintf(p, sizeof p, "%s/PWNED", dir);
  assert_int_not_equal(access(p, F_OK), 0);
  snprintf(p, sizeof p, "%s/PWNED2", dir);
  assert_int_not_equal(access(p, F_OK), 0);
}

static int run_status(const char *const *argv, char *out, size_t size) {
  int status = -1;
  assert_int_equal(val_run(argv, 20, out, size, &status, NULL), 0);
  return status;
}

/* A fake interpreter that writes its arguments one per line. */
static void write_fake_python(const char *path) {
  const char *text = "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$ARGS_OUT\"\n";
  assert_int_equal(val_write_file(path, text, strlen(text), 0755, NULL), 0);
}

static void test_val_files__job_json_escapes_kind(void **state) {
  (void)state;
  char *j = val_job_json("k\"\n\\\x01" HOSTILE, 7, "{\"s\":\"x\\\"y\"}");
  cJSON *doc = cJSON_Parse(j);
  assert_non_null(doc);
  assert_string_equal(cJSON_GetObjectItem(doc, "kind")->valuestring, "k\"\n\\\x01" HOSTILE);
  assert_int_equal(cJSON_GetObjectItem(doc, "id")->valueint, 7);
  assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "params"), "s")->valuestring,
                      "x\"y");
  cJSON_Delete(doc);
  free(j);
}

static void test_val_files__script_quotes_hostile_paths(void **state) {
  char sub[512], py[600], runner[600], job[600], script[600], args[600], out[4096];
  (void)state;
  snprintf(sub, sizeof sub, "%s/%s", dir, "d'q\"$(touch PWNED) `touch PWNED2` ;&|<>*?");
  assert_int_equal(val_mkdirs(sub, NULL), 0);
  snprintf(py, sizeof py, "%s/py th'on$(touch PWNED)", sub);
  snprintf(runner, sizeof runner, "%s/../%s/run`touch PWNED2`ner.py", sub, strrchr(sub, '/') + 1);
  snprintf(job, sizeof job, "%s/job '\"$HOME\".json", sub);
  snprintf(script, sizeof script, "%s/job.sh", sub);
  snprintf(args, sizeof args, "%s/args.txt", dir);
  write_fake_python(py);
  assert_int_equal(val_write_script(script, py, runner, job, NULL), 0);
  char *text = slurp(script);
  /* Every line is fixed text or the exec line; no value spans lines. */
  int lines = 0;
  for (char *p = text; *p; p++) lines += *p == '\n';
  assert_int_equal(lines, 4);
  assert_non_null(strstr(text, "exec '"));
  free(text);
  const char *check[] = {"bash", "-n", script, NULL}, *check_sh[] = {"sh", "-n", script, NULL};
  assert_int_equal(run_status(check, out, sizeof out), 0);
  assert_int_equal(run_status(check_sh, out, sizeof out), 0);
  setenv("ARGS_OUT", args, 1);
  const char *run[] = {"bash", script, NULL};
  assert_int_equal(run_status(run, out, sizeof out), 0);
  char want[2 * PATH_MAX + 64];
  snprintf(want, sizeof want, "%s\n%s\n", runner, job);
  char *got = slurp(args);
  assert_string_equal(got, want);
  free(got);
  assert_no_pwned();
}

static void test_val_files__script_refuses_control_chars(void **state) {
  char script[256];
  svc_err err;
  (void)state;
  snprintf(script, sizeof script, "%s/nl.sh", dir);
  assert_int_equal(val_write_script(script, "/usr/bin/python3", "/x/run\nner.py", "/j.json", &err),
                   -SVC_BAD_FIELD);
  assert_int_equal(val_write_script(script, "/usr/bin/py\rthon3", "/r.py", "/j.json", &err),
                   -SVC_BAD_FIELD);
  assert_int_not_equal(access(script, F_OK), 0);
}

/* A whole slurm submission with hostile values everywhere it can take
 * them; sbatch is absent from PATH so the job fails to start, leaving the
 * files to inspect. */
static void test_val_files__slurm_job_files_hold_no_hostile_values(void **state) {
  char db_path[256], out[4096], p[1024], args[300];
  hwdb *db = NULL;
  val_cfg cfg;
  int64_t id = 0;
  char token[VAL_TOKEN_LEN + 1];
  (void)state;
  snprintf(db_path, sizeof db_path, "%s/t.db", dir);
  assert_int_equal(hwdb_open(&db, db_path, NULL, NULL), 0);
  assert_int_equal(val_cfg_init(&cfg, db_path, NULL), 0);
  snprintf(cfg.workdir, sizeof cfg.workdir, "%s/w'$(touch PWNED)`touch PWNED2`/../w x", dir);
  snprintf(cfg.python, sizeof cfg.python, "%s/fake py'thon", dir);
  write_fake_python(cfg.python);
  /* HOSTILE as a JSON string: params arrive as valid (api-made) JSON. */
  const char *params = "{\"zz_key\":\"a'b\\\"c$(touch PWNED)`touch PWNED2`;${HOME}|&>x\\\\ "
                       "../../e\\n\",\"n\":3}";
  val_spec spec = {.kind = "cpu_selftest",
                   .hw = "h2'$(touch PWNED)\n`x`../..",
                   .params = params,
                   .backend = "slurm",
                   .gpus = -1};
  const char *old_path = getenv("PATH");
  char *saved = old_path ? strdup(old_path) : NULL;
  setenv("PATH", dir, 1); /* no sbatch here */
  svc_err err;
  assert_int_equal(val_submit(db, &cfg, &spec, &id, token, &err), 0);
  setenv("PATH", saved ? saved : "/usr/bin:/bin", 1);
  free(saved);
  hwdb_job j;
  assert_int_equal(hwdb_job_get(db, id, &j, NULL), 0);
  assert_string_equal(j.state, "failed");
  assert_non_null(strstr(j.note, "sbatch"));
  snprintf(p, sizeof p, "%s/job.sh", j.workdir);
  char *script = slurp(p);
  assert_null(strstr(script, "h2'"));
  assert_null(strstr(script, "zz_key"));
  assert_null(strstr(script, "../../e"));
  assert_null(strstr(script, "${HOME}"));
  const char *check[] = {"bash", "-n", p, NULL};
  assert_int_equal(run_status(check, out, sizeof out), 0);
  /* Running it passes the job file's real path through intact. */
  snprintf(args, sizeof args, "%s/args2.txt", dir);
  setenv("ARGS_OUT", args, 1);
  const char *run[] = {"bash", p, NULL};
  assert_int_equal(run_status(run, out, sizeof out), 0);
  char want[2 * PATH_MAX + 64];
  snprintf(want, sizeof want, "%s\n%s/job.json\n", cfg.runner, j.workdir);
  char *got = slurp(args);
  assert_string_equal(got, want);
  free(got);
  free(script);
  snprintf(p, sizeof p, "%s/job.json", j.workdir);
  char *jtext = slurp(p);
  cJSON *doc = cJSON_Parse(jtext);
  assert_non_null(doc);
  assert_string_equal(cJSON_GetObjectItem(doc, "kind")->valuestring, "cpu_selftest");
  assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "params"), "n")->valueint, 3);
  cJSON_Delete(doc);
  free(jtext);
  hwdb_job_dispose(&j);
  hwdb_free(db);
  assert_no_pwned();
}

static void test_val_files__bundle_folder(void **state) {
  char b[256], p[300], out[4096];
  struct stat st;
  (void)state;
  snprintf(b, sizeof b, "%s/bundle/x", dir);
  val_cfg cfg;
  assert_int_equal(val_cfg_init(&cfg, NULL, NULL), 0);
  char *job = val_job_json("cpu_selftest", 9, "{\"n\":10}");
  assert_int_equal(val_write_bundle(b, cfg.runner, 9, job, NULL), 0);
  free(job);
  snprintf(p, sizeof p, "%s/runner.py", b);
  assert_int_equal(stat(p, &st), 0);
  /* the whole runner package (validate/gpu/MANIFEST) travels with it */
  const char *mods[] = {"triton_matmul.py", "uvm_bag.py", "transformer_step.py", "batch.py"};
  for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++) {
    snprintf(p, sizeof p, "%s/%s", b, mods[i]);
    assert_int_equal(stat(p, &st), 0);
  }
  snprintf(p, sizeof p, "%s/run.sh", b);
  assert_int_equal(stat(p, &st), 0);
  assert_true(st.st_mode & S_IXUSR);
  const char *check[] = {"bash", "-n", p, NULL};
  assert_int_equal(run_status(check, out, sizeof out), 0);
  const char *run[] = {"sh", p, NULL};
  assert_int_equal(run_status(run, out, sizeof out), 0);
  snprintf(p, sizeof p, "%s/result.json", b);
  char *res = slurp(p);
  cJSON *doc = cJSON_Parse(res);
  assert_non_null(doc);
  assert_int_equal(cJSON_GetObjectItem(doc, "id")->valueint, 9);
  assert_true(cJSON_IsTrue(cJSON_GetObjectItem(doc, "ok")));
  cJSON_Delete(doc);
  free(res);
}

/* The kinds come from validate/gpu/kinds.def (the runner reads the same file): the API's
 * message lists them in its order, cpu_selftest asks for no GPU, each names its metric. */
static void test_val_files__kinds_from_the_runner_list(void **state) {
  char names[256];
  (void)state;
  val_kind_names(names, sizeof names);
  assert_string_equal(names, "gemm_sweep, kernel_sweep, memory_ops, step, transformer_step, "
                             "dlrm_step or cpu_selftest");
  assert_true(val_kind_valid("dlrm_step"));
  assert_false(val_kind_valid("dlrm"));
  assert_false(val_kind_valid(NULL));
  assert_int_equal(val_kind_gpus("cpu_selftest"), 0);
  assert_int_equal(val_kind_gpus("gemm_sweep"), 1);
  assert_string_equal(val_kind_metric("step"), "step_ms");
  assert_string_equal(val_kind_metric("kernel_sweep"), "cublas_ms");
  assert_string_equal(val_kind_metric("cpu_selftest"), "elapsed_ms");
  assert_string_equal(val_kind_metric("gemm_sweep"), "ms");
  val_kind_names(names, 12); /* truncated, still terminated */
  assert_string_equal(names, "gemm_sweep,");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_val_files__job_json_escapes_kind),
      cmocka_unit_test(test_val_files__kinds_from_the_runner_list),
      cmocka_unit_test_setup_teardown(test_val_files__script_quotes_hostile_paths, setup, teardown),
      cmocka_unit_test_setup_teardown(test_val_files__script_refuses_control_chars, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_val_files__slurm_job_files_hold_no_hostile_values, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_val_files__bundle_folder, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
