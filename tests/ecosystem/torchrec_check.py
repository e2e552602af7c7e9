"""torchrec_check.py: hold a module made by `cdplan export torchrec` to the
facts read from TorchRec's source (tests/fixtures/torchrec_facts.json, which
names the commit). TorchRec is not installable here, so the module is parsed
with ast and every call is checked: only helpers TorchRec has, imported from
where it defines them, with the parameters their signatures take; ranks in
the world, host_index in the hosts, column shards equal and at least
MIN_CW_DIM wide, kernels TorchRec accepts for the sharding type, cache
params only on caching kernels, per_param_sharding keys = TABLES keys (no
'#', no '.'), and a ShardingPlan keyed by the module path.

check(text, facts, plan=None) returns the list of problems ([] = fine);
plan (the stored plan JSON) also checks that each table keeps cdplan's
sharding and ranks.
"""
import ast
import json
import sys


def _lit(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def _call_args(call, sig):
    """Keyword arguments of call by name, positionals mapped to sig order."""
    out, bad = {}, []
    for i, a in enumerate(call.args):
        if i >= len(sig):
            bad.append("too many positional arguments")
        else:
            out[sig[i]] = a
    for k in call.keywords:
        if k.arg is None:
            bad.append("**kwargs")
        elif k.arg in out:
            bad.append(f"{k.arg} given twice")
        else:
            out[k.arg] = k.value
    return out, bad


def check(text, facts, plan=None):
    problems = []
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        return [f"not Python: {e}"]
    helpers = facts["helpers"]
    kernels = facts["training_kernels_by_sharding_type"]
    min_cw = facts["rules"]["MIN_CW_DIM"]

    imported = {}
    consts = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            allowed = facts["imports"].get(node.module)
            for a in node.names:
                if allowed is None or a.name not in allowed:
                    problems.append(f"import {a.name} from {node.module}: TorchRec has no such name there")
                imported[a.asname or a.name] = a.name
        elif isinstance(node, ast.Import):
            problems.append("plain import: only the TorchRec helpers are needed")
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            consts[node.targets[0].id] = _lit(node.value)
    tables = consts.get("TABLES")
    local, world = consts.get("LOCAL_SIZE"), consts.get("WORLD_SIZE")
    if not isinstance(tables, dict) or not tables:
        return problems + ["no TABLES {name: (num_embeddings, embedding_dim)}"]
    if not isinstance(local, int) or not isinstance(world, int) or local < 1 or world % local:
        return problems + [f"LOCAL_SIZE {local} / WORLD_SIZE {world} are not a whole number of hosts"]
    if not isinstance(consts.get("MODULE_PATH"), str):
        problems.append("no MODULE_PATH string")
    for name in tables:
        if "#" in name or "." in name or not name:
            problems.append(f"table name {name!r}: not a name an EmbeddingBagCollection has")

    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "build_plan"]
    if len(funcs) != 1:
        return problems + ["no build_plan function"]
    fn = funcs[0]

    # Every call: a known helper (or a builtin/method the module uses).
    sharding = {}  # table -> (helper, args)
    cmsp = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        fname = node.func.id if isinstance(node.func, ast.Name) else None
        if fname is None:
            continue  # methods: ebc.embedding_bag_configs(), set.items()
        real = imported.get(fname)
        if real is None:
            if fname not in ("set", "ValueError"):
                problems.append(f"call of {fname}: not imported from TorchRec")
            continue
        sig = helpers.get(real)
        if sig is None:
            problems.append(f"{real}: no signature in the facts")
            continue
        args, bad = _call_args(node, sig["params"])
        problems += [f"{real}: {b}" for b in bad]
        for k in args:
            if k not in sig["params"]:
                problems.append(f"{real}() takes no {k}= (TorchRec: {', '.join(sig['params']) or 'no arguments'})")
        for k in sig["required"]:
            if k not in args:
                problems.append(f"{real}() needs {k}=")
        if real == "construct_module_sharding_plan":
            cmsp.append(args)

    if len(cmsp) != 1:
        return problems + [f"construct_module_sharding_plan called {len(cmsp)} times, not once"]
    pps = cmsp[0].get("per_param_sharding")
    if not isinstance(pps, ast.Dict):
        return problems + ["per_param_sharding is not a dict literal"]
    for k in ("local_size", "world_size"):
        v = cmsp[0].get(k)
        if not (isinstance(v, ast.Name) and v.id == k.upper()):
            problems.append(f"construct_module_sharding_plan: {k}= is not {k.upper()}")
    keys = []
    for kn, vn in zip(pps.keys, pps.values):
        name = _lit(kn)
        keys.append(name)
        if not isinstance(vn, ast.Call) or not isinstance(vn.func, ast.Name):
            problems.append(f"{name}: not a helper call")
            continue
        real = imported.get(vn.func.id, vn.func.id)
        stype = facts["helper_sharding_type"].get(real)
        if stype is None:
            problems.append(f"{name}: {real} is no sharding helper")
            continue
        args, _ = _call_args(vn, helpers[real]["params"])
        sharding[name] = [stype, {k: _lit(v) for k, v in args.items()}]
    if sorted(keys, key=str) != sorted(tables, key=str):
        problems.append("per_param_sharding keys differ from TABLES: construct_module_sharding_plan asserts they match the module's tables")

    # Kernels and cache params set on the built plan.
    kernel_of = {n: a.get("compute_kernel") for n, (t, a) in sharding.items()}
    cached = {}
    for node in ast.walk(fn):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        t = node.targets[0]
        if not (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Subscript)):
            continue
        name = _lit(t.value.slice)
        if t.attr not in facts["parameter_sharding_fields"]:
            problems.append(f"{name}: ParameterSharding has no field {t.attr}")
        elif t.attr == "compute_kernel":
            kernel_of[name] = _lit(node.value)
        elif t.attr == "cache_params":
            c = node.value
            if not (isinstance(c, ast.Call) and imported.get(getattr(c.func, "id", None)) == "CacheParams"):
                problems.append(f"{name}: cache_params is not a CacheParams(...)")
                continue
            args, _ = _call_args(c, helpers["CacheParams"]["params"])
            lf = _lit(args.get("load_factor")) if "load_factor" in args else None
            if not isinstance(lf, (int, float)) or not 0 < lf <= 1:
                problems.append(f"{name}: CacheParams(load_factor={lf}) is not in (0, 1]")
            cached[name] = lf
        if name not in sharding:
            problems.append(f"{name}: set on a table the plan does not shard")

    for name, (stype, a) in sharding.items():
        rows, dim = tables.get(name, (0, 0))
        k = kernel_of.get(name)
        if stype == "data_parallel":
            if k not in (None, "dense"):
                problems.append(f"{name}: data_parallel takes kernel dense, not {k}")
        elif k is None:
            problems.append(f"{name}: {stype} without an explicit compute_kernel")
        elif k not in kernels[stype]:
            problems.append(f"{name}: kernel {k} is not one TorchRec takes for {stype} ({kernels[stype]})")
        if name in cached and k not in facts["cache_params_kernels"]:
            problems.append(f"{name}: cache params on kernel {k}, which has no cache")
        if k in facts["cache_params_kernels"] and name not in cached:
            problems.append(f"{name}: {k} without CacheParams(load_factor=)")
        if stype == "table_wise":
            r = a.get("rank")
            if not isinstance(r, int) or not 0 <= r < world:
                problems.append(f"{name}: table_wise rank {r} outside 0..{world - 1}")
        elif stype == "column_wise":
            ranks = a.get("ranks")
            if not isinstance(ranks, list) or len(ranks) < 2 or any(not isinstance(r, int) or not 0 <= r < world for r in ranks):
                problems.append(f"{name}: column_wise ranks {ranks} are not 2+ ranks of the world")
            elif dim % len(ranks):
                problems.append(f"{name}: dim {dim} does not split evenly in {len(ranks)} (column_wise raises ValueError)")
            elif dim // len(ranks) < min_cw:
                problems.append(f"{name}: column shards of {dim // len(ranks)} < MIN_CW_DIM {min_cw}")
        elif stype == "table_row_wise":
            h = a.get("host_index")
            if not isinstance(h, int) or not 0 <= h < world // local:
                problems.append(f"{name}: host_index {h} outside 0..{world // local - 1}")

    # The plan returned: ShardingPlan(plan={module_path: module_plan}).
    rets = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    ok = False
    for r in rets:
        c = r.value
        if isinstance(c, ast.Call) and imported.get(getattr(c.func, "id", None)) == "ShardingPlan":
            args, _ = _call_args(c, helpers["ShardingPlan"]["params"])
            p = args.get("plan")
            ok = isinstance(p, ast.Dict) and len(p.keys) == 1 and isinstance(p.keys[0], ast.Name) and p.keys[0].id == "module_path"
    if not ok:
        problems.append("build_plan does not return ShardingPlan(plan={module_path: ...})")

    if plan is not None:
        doc = plan.get("to", plan) if "direct_port" in plan else plan
        gpn = doc["recipe"]["gpus_per_node"]
        for t in doc["embedding_plan"]["tables"]:
            name = t["name"].replace("#", "_")
            got = sharding.get(name)
            if got is None:
                problems.append(f"plan table {t['name']} is missing as {name}")
                continue
            stype, a = got
            if t["sharding_type"] == "column_wise" and stype == "table_wise":
                continue  # a split TorchRec does not take, said in a comment
            if stype != t["sharding_type"]:
                problems.append(f"{name}: {stype}, the plan says {t['sharding_type']}")
            elif stype == "table_wise" and a.get("rank") != t["ranks"][0]:
                problems.append(f"{name}: rank {a.get('rank')}, the plan says {t['ranks'][0]}")
            elif stype == "column_wise" and a.get("ranks") != t["ranks"][: len(a.get("ranks") or [])]:
                problems.append(f"{name}: ranks {a.get('ranks')}, the plan says {t['ranks']}")
            elif stype == "table_row_wise" and a.get("host_index") != t["ranks"][0] // gpn:
                problems.append(f"{name}: host {a.get('host_index')}, the plan's ranks {t['ranks']}")
    return problems


if __name__ == "__main__":
    facts = json.load(open(sys.argv[1]))
    text = open(sys.argv[2]).read()
    plan = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else None
    probs = check(text, facts, plan)
    for p in probs:
        print(p)
    sys.exit(1 if probs else 0)
