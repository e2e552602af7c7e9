"""The job kinds, read from kinds.def beside this file (the list validate/job.c compiles
in), each with the module of its name that checks and runs it. Standard library only."""
import importlib
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
_LINE = re.compile(r"^VAL_KIND\(([a-z_][a-z0-9_]*), ([0-9]+), ([a-z_][a-z0-9_]*)\)$")


class Kind:
    def __init__(self, name, gpus, metric):
        self.name, self.gpus, self.metric = name, gpus, metric

    def module(self):
        """The kind's module: check_params(v, field) and run(job, env, state)."""
        return importlib.import_module(self.name)


def load(path=os.path.join(HERE, "kinds.def")):
    """name -> Kind, in the file's order."""
    kinds = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = _LINE.match(line.strip())
            if m:
                kinds[m.group(1)] = Kind(m.group(1), int(m.group(2)), m.group(3))
    if not kinds:
        raise RuntimeError("no VAL_KIND line in %s" % path)
    return kinds
