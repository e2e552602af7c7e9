#!/usr/bin/env python3
"""validate/gpu/MANIFEST names every file runner.py needs: the modules it imports,
directly or through others (function-level imports included), the kind modules kinds.def
names (imported by name) and kinds.def itself; and every name in it exists. Each kind's
module has check_params and run, the dashboard's kind menu (web/index.html) offers only
declared kinds and docs/openapi.yaml lists them all. Exit 1 naming what is missing (a bundle without a module fails on the GPU
host: uvm_bag.py once).
usage: runner_manifest.py validate/gpu"""
import ast
import os
import re
import sys


def local_imports(path, here):
    """The modules beside runner.py that the file at path imports."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = set()
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        for n in names:
            top = n.split(".")[0]
            if os.path.isfile(os.path.join(here, top + ".py")):
                out.add(top + ".py")
    return out


def listed_in(here, path, outer, item):
    """The items (regex item) inside the first match of outer in the checkout's path;
    None when the file is not there (a runner package copied elsewhere)."""
    full = os.path.join(here, "..", "..", path)
    if not os.path.isfile(full):
        return None
    with open(full, encoding="utf-8") as f:
        m = re.search(outer, f.read(), re.S)
    return re.findall(item, m.group(1)) if m else []


def main(here):
    kinds = []
    with open(os.path.join(here, "kinds.def"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^VAL_KIND\(([a-z_0-9]+),", line.strip())
            if m:
                kinds.append(m.group(1))
    need = {"kinds.def"}
    todo = ["runner.py"] + [k + ".py" for k in kinds]
    seen = set()
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        if not os.path.isfile(os.path.join(here, f)):
            print("FAIL: %s (a kind or an import) does not exist" % f)
            return 1
        if f != "runner.py":
            need.add(f)
        todo.extend(local_imports(os.path.join(here, f), here) - seen)
    with open(os.path.join(here, "MANIFEST"), encoding="utf-8") as f:
        listed = {ln.strip() for ln in f if ln.strip() and not ln.startswith("#")}
    missing = sorted(need - listed)
    absent = sorted(n for n in listed if not os.path.isfile(os.path.join(here, n)))
    if missing:
        print("FAIL: MANIFEST misses %s" % ", ".join(missing))
    if absent:
        print("FAIL: MANIFEST names files that do not exist: %s" % ", ".join(absent))
    if missing or absent:
        return 1
    # each kind's module checks and runs it (imports are Python alone: no torch needed)
    sys.path.insert(0, here)
    import job_kinds  # noqa: PLC0415
    for name, k in job_kinds.load().items():
        mod = k.module()
        if not callable(getattr(mod, "check_params", None)) or not callable(getattr(mod, "run", None)):
            print("FAIL: %s.py has no check_params(v, field) and run(job, env, state)" % name)
            return 1
    # the dashboard's kind menu offers declared kinds only; the API's description lists them all
    menu = listed_in(here, "web/index.html", r'<select id="vs-kind">(.*?)</select>',
                     r'<option value="([^"]+)"')
    if menu is not None and (not menu or set(menu) - set(kinds)):
        print("FAIL: web/index.html's kind menu %s is not within kinds.def" % menu)
        return 1
    api = listed_in(here, "docs/openapi.yaml", r"ValidationSubmit:.*?kind:.*?enum: \[([^\]]*)\]",
                    r"([a-z_0-9]+)")
    if api is not None and api != kinds:
        print("FAIL: docs/openapi.yaml ValidationSubmit kinds %s != kinds.def %s" % (api, kinds))
        return 1
    print("MANIFEST: %d files, the %d runner.py needs among them (%d kinds)"
          % (len(listed), len(need), len(kinds)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
