#!/usr/bin/env python3
"""The twentieth, twenty-third and twenty-fourth rounds' rules on the H100 sweeps of sets 25-28 and
the M = 1 probe: sets meeting all three selection targets, pooled bf16 + fp16 top-1 geomean and
shape-weighted mean tau of each committed predictions file (each scored once).

  cd data/measurements && python3 h100-awkfam/rules_25_28.py
"""
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_awkfam import join, read_json, score  # noqa: E402
from loso_sets import pooled  # noqa: E402

SETS = ['-m1', '25', '26', '27', '28']


@functools.lru_cache(maxsize=None)
def scored(s, name):
    """(top-1, worst, tau, shapes) of predictions file name on set s's sweep"""
    rows = read_json('h100-awkward%s/blind_kernel_16bit.json' % s)['rows']
    probs = join(read_json('h100-awkward%s/%s' % (s, name))['selection'], rows)
    return score(probs) + (len(probs),)


def rule(files, sets):
    return pooled([scored(s, files(s)) for s in sets])


def base(s):
    """the picks shipped before: r21's file where it exists (its picks are r20's)"""
    r21 = 'predictions_r21.json'
    kept = 'h100-awkward%s/%s' % (s, r21)
    return r21 if os.path.exists(kept) or os.path.exists(kept + '.gz') else 'predictions.json'


def named(name):
    return lambda s: name


r20_sets = ['-m1', '25', '26']
print('r20 rule (25,26,m1): pre', rule(named('predictions.json'), r20_sets), ' r20',
      rule(named('predictions_r20.json'), r20_sets))
print('r23 rule: base', rule(base, SETS), ' r23', rule(named('predictions_r23.json'), SETS))
print('r24 rule: r23', rule(named('predictions_r23.json'), SETS), ' r24',
      rule(named('predictions_r24.json'), SETS))
print('r24 vs base', rule(base, SETS), rule(named('predictions_r24.json'), SETS))
