/* lps FILE.lp [SECONDS]: solve a CPLEX-LP file with GLPK (bench/planner_study, docs/planner.md
 * "Tenth pass"): the LP, then with SECONDS the MILP; prints rc, status, objective; LPS_X=1 prints
 * the nonzero columns; LPS_FP=1 / LPS_PS=1 switch on the feasibility pump / proximity search.
 * Build: cc -O2 -o $STUDY_DIR/lps lps.c -lglpk */
#include <glpk.h>
#include <stdio.h>
#include <stdlib.h>
/* lps file.lp [mip]: solve a CPLEX LP file, print status and objective */
int main(int argc, char **argv) {
  glp_prob *P = glp_create_prob();
  glp_term_out(GLP_OFF);
  if (glp_read_lp(P, NULL, argv[1])) {
    printf("read error\n");
    return 1;
  }
  glp_smcp s;
  glp_init_smcp(&s);
  s.meth = GLP_DUALP;
  s.presolve = getenv("LPS_NOPRE") ? GLP_OFF : GLP_ON;
  if (getenv("LPS_TERM")) glp_term_out(GLP_ON);
  glp_scale_prob(P, GLP_SF_AUTO);
  int rc = glp_simplex(P, &s);
  int st = glp_get_status(P);
  printf("rc %d status %d obj %.6f rows %d cols %d\n", rc, st, glp_get_obj_val(P),
         glp_get_num_rows(P), glp_get_num_cols(P));
  if (argc > 2) {
    glp_iocp io;
    glp_init_iocp(&io);
    io.tm_lim = atoi(argv[2]) * 1000;
    io.presolve = getenv("LPS_NOPRE") ? GLP_OFF : GLP_ON;
    if (getenv("LPS_FP")) io.fp_heur = GLP_ON; /* feasibility pump */
    if (getenv("LPS_PS")) io.ps_heur = GLP_ON; /* proximity search */
    rc = glp_intopt(P, &io);
    printf("mip rc %d status %d obj %.6f\n", rc, glp_mip_status(P), glp_mip_obj_val(P));
  }
  if (getenv("LPS_X"))
    for (int j = 1; j <= glp_get_num_cols(P); j++) {
      double v = argc > 2 ? glp_mip_col_val(P, j) : glp_get_col_prim(P, j);
      if (v > 1e-7) printf("x %s %.6f\n", glp_get_col_name(P, j), v);
    }
  return 0;
}
