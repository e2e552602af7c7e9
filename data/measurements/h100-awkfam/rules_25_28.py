#!/usr/bin/env python3
"""The twentieth, twenty-third and twenty-fourth rounds' rules on the H100 sweeps of sets 25-28 and the
M = 1 probe: sets meeting all three selection targets, pooled bf16 + fp16 top-1 geomean and
shape-weighted mean tau of each committed predictions file. Run from data/measurements."""
import json,sys,math
sys.path.insert(0,'h100-awkfam')
from fit_awkfam import join,score
sets=['-m1','25','26','27','28']
def S(s,f):
    rows=json.load(open('h100-awkward%s/blind_kernel_16bit.json'%s))['rows']
    probs=join(json.load(open('h100-awkward%s/%s'%(s,f)))['selection'],rows)
    return score(probs),len(probs)
def pooled(files,sl):
    L=[S(s,files(s)) for s in sl]
    N=sum(n for _,n in L)
    met=sum(all(a>=t for a,t in zip(sc,(0.96,0.85,0.75))) for sc,_ in L)
    return met, math.exp(sum(math.log(sc[0])*n for sc,n in L)/N), sum(sc[2]*n for sc,n in L)/N
import os
base=lambda s:'predictions_r21.json' if os.path.exists('h100-awkward%s/predictions_r21.json'%s) else 'predictions.json'
print('r20 rule (25,26,m1): pre', pooled(lambda s:'predictions.json',['-m1','25','26']),' r20',pooled(lambda s:'predictions_r20.json',['-m1','25','26']))
print('r23 rule: base',pooled(base,sets),' r23',pooled(lambda s:'predictions_r23.json',sets))
print('r24 rule: r23',pooled(lambda s:'predictions_r23.json',sets),' r24',pooled(lambda s:'predictions_r24.json',sets))
print('r24 vs base',pooled(base,sets),pooled(lambda s:'predictions_r24.json',sets))
