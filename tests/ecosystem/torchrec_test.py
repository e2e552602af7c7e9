"""torchrec_test.py: `cdplan export torchrec` on real plans (GLPK solves on a
temporary SQLite database) passes torchrec_check against the facts read from
TorchRec's source; the check catches each of a list of broken modules (so it
can fail); `cdplan import torchrec` turns EmbeddingBagConfig fields and
ParameterConstraints pooling factors into a workload `cdplan step` takes.
usage: torchrec_test.py PATH_TO_CDPLAN
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import torchrec_check  # noqa: E402

BIN = sys.argv[1]
FACTS = json.load(open(os.path.join(REPO, "tests", "fixtures", "torchrec_facts.json")))
failures = []


def cdplan(*args, stdin=None):
    r = subprocess.run([BIN, *args], input=stdin, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def example(name):
    return json.load(open(os.path.join(REPO, "data", "workloads", name)))


def requests():
    mem = example("plan_compare_h100_to_h200.json")
    all_types = ["table_wise", "row_wise", "column_wise", "table_row_wise", "data_parallel"]
    # 2 nodes, host placement, cache_ratio: table_row_wise and a UVM cache (the tables doubled,
    # 1.8 TB of fp32 rows over 16 x 80 GB, so that some must live in host memory)
    big = json.loads(json.dumps(mem["workload"]))
    for t in big["tables"]:
        t["rows"] *= 2
    yield "host", "plan", {
        "workload": big, "hardware": "h100-sxm", "cluster": {"gpus_per_node": 8, "nodes": 2},
        "baseline": mem["baseline"], "knobs": dict(mem["knobs"], sharding=all_types),
        "time_limit_s": 3, "cache_ratio": 0.25}
    # host tables served by the CPU (cdplan kernel "cpu", no TorchRec kernel)
    yield "cpu", "plan", {
        "workload": mem["workload"], "hardware": "h100-sxm", "cluster": {"gpus_per_node": 8, "nodes": 1},
        "baseline": mem["baseline"], "knobs": mem["knobs"], "time_limit_s": 2, "host_tables": "cpu"}
    step = example("dlrm_h200_step.json")
    for label, types, dim in (("cw", ["column_wise", "data_parallel"], 256),
                              ("rw", ["row_wise", "data_parallel"], 128)):
        w = json.loads(json.dumps(step["workload"]))
        for t in w["tables"]:
            t["dim"] = dim
        w["bottom_mlp"][-1] = dim
        yield label, "plan", {
            "workload": w, "hardware": "h200", "cluster": {"gpus_per_node": 8, "nodes": 1},
            "baseline": {"batch_per_gpu": 4096, "precision": "bf16", "embedding_precision": "fp32",
                         "framework": "torchrec_fbgemm"},
            "knobs": {"sharding": types, "host_placement": True}, "time_limit_s": 2}
    cmp = example("plan_compare_h100_to_h200.json")
    cmp["time_limit_s"] = 2
    yield "compare", "compare", cmp


def main():
    tmp = tempfile.mkdtemp(prefix="cdplan-torchrec-")
    db = os.path.join(tmp, "t.db")
    texts = {}
    for label, cmd, req in requests():
        rc, out, err = cdplan(cmd, "-", f"--db={db}", stdin=json.dumps(req))
        if rc:
            failures.append(f"{label}: cdplan {cmd} exited {rc}: {err[:300]}")
            continue
        plan = json.loads(out)
        args = ["export", "torchrec", plan["id"], "--db", db]
        if label == "host":
            args.append("--module=model.sparse_arch.embedding_bag_collection")
        rc, text, err = cdplan(*args)
        if rc:
            failures.append(f"{label}: export exited {rc}: {err[:300]}")
            continue
        texts[label] = text
        probs = torchrec_check.check(text, FACTS, plan)
        failures.extend(f"{label}: {p}" for p in probs)
        types = {t["sharding_type"] for t in (plan.get("to") or plan)["embedding_plan"]["tables"]}
        print(f"{label}: {len(text.splitlines())} lines, cdplan shardings {sorted(types)}, {len(probs)} problems")

    want = {"host": ["table_row_wise(host_index=", "CacheParams(load_factor=0.25)", '"large_0": table_wise(',
                     'MODULE_PATH = "model.sparse_arch.embedding_bag_collection"'],
            "cw": ["column_wise(ranks=["],
            "rw": ['row_wise(compute_kernel="fused")', "data_parallel()"],
            "cpu": ['compute_kernel="fused_uvm"', "no TorchRec kernel"]}
    for label, needles in want.items():
        for n in needles:
            if n not in texts.get(label, ""):
                failures.append(f"{label}: the module lacks {n!r}")

    # Broken modules the check must refuse: (plan, from, to), regex or text.
    broken = [
        ("rw", r"data_parallel\(\)", 'data_parallel(compute_kernel="fused")'),
        ("rw", r'row_wise\(compute_kernel="fused"\)', 'row_wise(compute_kernel="cpu")'),
        ("rw", r'row_wise\(compute_kernel="fused"\)', 'row_wise(compute_kernel="dense")'),
        ("cw", r"column_wise\(ranks=\[(\d+), (\d+)\]", r"column_wise(ranks=[\1, \2, 3]"),
        ("cw", r"column_wise\(ranks=\[(\d+), (\d+)\]", r"column_wise(ranks=[\1, \2, 3, 4]"),
        ("host", r"host_index=\d+", "host_index=2"),
        ("host", r'"large_0"', '"large#0"'),
        ("host", r"load_factor=0\.25", "load_factor=1.5"),
        ("host", r"\n    module_plan\[[^\n]*\.cache_params = [^\n]*", ""),
        ("host", r"table_wise\(rank=", "table_wise(ranks="),
        ("host", r"table_wise\(rank=\d+", "table_wise(rank=16"),
        ("host", r"table_row_wise\(host_index=(\d+)\)", r'table_row_wise(host_index=\1, compute_kernel="fused")'),
        ("host", r"import CacheParams, ShardingPlan", "import CacheParams, ShardingPlan, GridShardingPlan"),
        ("rw", r"    return ShardingPlan\(plan=\{module_path: module_plan\}\)", "    return module_plan"),
    ]
    for label, pat, rep in broken:
        if label not in texts:
            continue
        bad, n = re.subn(pat, rep, texts[label], count=1)
        if n == 0:
            failures.append(f"mutation {pat!r} found nothing in {label}")
        elif not torchrec_check.check(bad, FACTS):
            failures.append(f"the check took a broken module: {label} with {pat!r} -> {rep!r}")

    # Export errors: 404 for an unknown plan, 400 naming module.
    rc, _, err = cdplan("export", "torchrec", "0123456789abcdef", "--db", db)
    if rc != 1 or '"code":"not_found"' not in err:
        failures.append(f"unknown plan: exit {rc} {err}")
    rc, out, _ = cdplan("plan", "-", "--db", db, stdin=json.dumps(next(requests())[2]))
    if rc == 0:
        rc, _, err = cdplan("export", "torchrec", json.loads(out)["id"], "--module", "a..b", "--db", db)
        if rc != 1 or '"field":"module"' not in err:
            failures.append(f"bad module path: exit {rc} {err}")

    # A table name TorchRec cannot have ('.' in a ModuleDict key): refused.
    dotted = [r for r in requests() if r[0] == "rw"][0][2]
    dotted["workload"]["tables"][0]["name"] = "user.id"
    rc, out, err = cdplan("plan", "-", "--db", db, stdin=json.dumps(dotted))
    if rc == 0:
        rc, _, err = cdplan("export", "torchrec", json.loads(out)["id"], "--db", db)
    if rc != 1 or '"field":"workload.tables"' not in err:
        failures.append(f"a dotted table name: exit {rc} {err[:200]}")

    # Import: configs + constraints -> a workload a step request takes.
    fixture = os.path.join(REPO, "tests", "fixtures", "torchrec_tables.json")
    rc, out, err = cdplan("import", "torchrec", fixture)
    if rc:
        failures.append(f"import exited {rc}: {err}")
    else:
        doc = json.loads(out)
        tabs = {t["name"]: t for t in doc["workload"]["tables"]}
        if tabs.get("item_history", {}).get("pooling") != 25 or tabs.get("user_id", {}).get("pooling") != 1:
            failures.append(f"pooling factors not summed (20 + 4.6 -> 25; default 1): {tabs}")
        if tabs.get("user_id", {}).get("rows") != 4000000 or doc["recipe"]["embedding_precision"] != "fp16":
            failures.append(f"rows / precision: {doc}")
        step = {"hardware": "h200", "workload": doc["workload"],
                "recipe": dict(doc["recipe"], gpus=8, batch_per_gpu=2048, precision="bf16",
                               framework="torchrec_fbgemm")}
        rc, out, err = cdplan("step", "-", "--db", db, stdin=json.dumps(step))
        if rc or "step_ms" not in out:
            failures.append(f"the imported workload does not step: exit {rc} {err[:300]}")
    src = json.load(open(fixture))
    for mutate, field in (
        (lambda d: d["tables"][1].update(data_type="FP64"), '"field":"tables[1].data_type"'),
        (lambda d: d["tables"][2].update(data_type="FP32"), '"field":"tables[2].data_type"'),
        (lambda d: d["tables"][0].update(pooling="NONE"), '"field":"tables[0].pooling"'),
        (lambda d: d["tables"][0].pop("num_embeddings"), '"field":"tables[0].num_embeddings"'),
        (lambda d: d["tables"][0].update(embedding_dimm=3), '"field":"tables[0].embedding_dimm"'),
        (lambda d: d["constraints"]["item_history"].update(pooling_factors=[-1]), "pooling_factors"),
        (lambda d: d["constraints"].update(nosuch={"pooling_factors": [1]}), '"field":"constraints"'),
    ):
        d = json.loads(json.dumps(src))
        mutate(d)
        rc, _, err = cdplan("import", "torchrec", "-", stdin=json.dumps(d))
        if rc != 1 or field not in err:
            failures.append(f"import of a bad config: exit {rc}, wanted {field}: {err}")
    rc, _, err = cdplan("import", "torchrec", os.path.join(tmp, "missing.json"))
    if rc != 2:
        failures.append(f"import of a missing file: exit {rc} (want 2) {err}")

    subprocess.run(["rm", "-rf", tmp], check=False)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)
    print(f"{len(texts)} exported plans pass the TorchRec facts (commit {FACTS['commit'][:12]}); "
          f"{len(broken)} broken modules refused; import checked")


main()
