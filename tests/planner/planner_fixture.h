/* Shared fixtures of the planner tests: an H200-like descriptor built in
 * code (no JSON, no database) and a small deterministic generator. */
#ifndef CDPLAN_TEST_PLANNER_FIXTURE_H
#define CDPLAN_TEST_PLANNER_FIXTURE_H

#include "planner/planner_int.h"

void fx_hw(cost_hw *hw, double usable_gb);
/* x in [0, 1) from a 64-bit LCG state. */
double fx_rand(uint64_t *s);
/* A problem on gpn x nodes GPUs with cap_gb for the embeddings. */
void fx_problem(plan_emb_problem *p, int gpn, int nodes, double cap_gb);
/* choice[i]: table i's option of least total work (ms x pieces) among the
 * feasible ones, for i < n. */
void fx_cheapest(const emb_inst *in, size_t n, int *choice);

#endif
