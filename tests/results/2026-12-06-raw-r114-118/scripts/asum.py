import csv, math, sys, collections
def load(p):
    d=collections.OrderedDict()
    for r in csv.DictReader(open(p)):
        key=(r['kind'],int(r['d']),r['causal']=='True',int(r['seq']))
        d.setdefault(key,{})[r['impl']]=float(r['tflops'])
    return d
def gm(x): return math.exp(sum(map(math.log,x))/len(x)) if x else float('nan')
for path,ours,anchors in [('/work/.device/2/n1/fa3/attention.csv','ours:wst',['fa3','cudnn']),('/work/.device/6/fa4/attention.csv','ours',['fa4','cudnn'])]:
    d=load(path); print(path)
    big=[];small=[];rows=[]
    for k,v in d.items():
        if k[0]!='paper': 
            a=[v[x] for x in anchors if x in v]
            print('  ',k, ours, v.get(ours), 'best', max(a) if a else None, 'ratio %.3f'%(v[ours]/max(a)) if a else '', 'vs fa3/fa4 %.3f'%(v[ours]/v[anchors[0]]) if anchors[0] in v else '')
            continue
        best=max(v[x] for x in anchors); r=v[ours]/best
        (big if k[3]>=2048 else small).append(r); rows.append((k,r,v[ours],best))
    print('  seq>=2k geomean %.3f min %.3f (%s)'%(gm(big),min(big),min(rows,key=lambda x:x[1] if x[0][3]>=2048 else 9)[0]))
    print('  512/1k geomean %.3f min %.3f'%(gm(small),min(small)))
    for k,r,o,b in rows:
        if k[1]==128 and k[3]==8192: print('  ',k,'%.3f'%r,o,b)
    print('  cells >=1.0 at seq>=2k:',sum(1 for k,r,o,b in rows if k[3]>=2048 and r>=1.0),'of',len(big))
# wst over production in FA3 call
d=load('/work/.device/2/n1/fa3/attention.csv')
for k,v in d.items():
    if k[1]==64 and k[3]<=1024: print('wst/ours',k,'%.3f'%(v['ours:wst']/v['ours']))
