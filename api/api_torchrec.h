/* api/torchrec: a stored plan as a TorchRec sharding plan, and TorchRec
 * table configs as a cdplan workload (`cdplan export torchrec`,
 * GET /v1/plans/{id}?format=torchrec, `cdplan import torchrec`).
 *
 * The rules followed (helper signatures, kernels per sharding type,
 * MIN_CW_DIM, host_index) were read from TorchRec's source at the commit
 * named in tests/fixtures/torchrec_facts.json; the test holds the emitted
 * module to that file.
 */
#ifndef CDPLAN_API_TORCHREC_H
#define CDPLAN_API_TORCHREC_H

#include <stddef.h>

#include "api/api.h"

/* torchrec/distributed/planner/constants.py: the smallest column shard. */
#define API_TORCHREC_MIN_CW_DIM 128
#define API_TORCHREC_DEFAULT_MODULE "sparse_arch.embedding_bag_collection"

/* Plan id (a plan, or a compare: its "to" plan) -> *out, a malloc'd Python
 * module text whose build_plan(ebc) returns the ShardingPlan for the
 * EmbeddingBagCollection at module (dotted path, NULL: the default).
 * 404 for an unknown id, 400 naming "module" for a bad path. */
int api_plan_torchrec(api_ctx *ctx, const char *id, const char *module, char **out, svc_err *err);

/* TorchRec configs -> a workload: {"tables":[EmbeddingBagConfig fields],
 * "constraints":{name:{"pooling_factors":[..]}}, "dense_features",
 * "bottom_mlp", "top_mlp"} or just the list of tables -> *out, the JSON
 * workload {"kind":"dlrm","tables":[{"name","rows","dim","pooling"}],...}
 * plus "embedding_precision" from data_type. 400 naming the field. */
int api_torchrec_import(const char *body, size_t len, char **out, svc_err *err);

#endif
