import csv,sys,collections
t=collections.defaultdict(dict)
for r in csv.DictReader(open(sys.argv[1])):
    t[r['shape']][r['implementation']]=float(r['median_ms'])
cols=['ours','ours-skinny-64-ck','ours-skinny-64-ckp','ours-skinny-128-ck','ours-skinny-128-ckp','ours-skinny-192-ck','ours-skinny-192-ckp']
print('shape'.ljust(16),'cublas_us',' '.join(c.replace('ours-skinny-','s') .rjust(8) for c in cols),'best-of-old','best-name')
for s,d in t.items():
    cb=min(d.get('cublasGemmEx',9),d.get('cublasLt-heuristic',9))
    old=min((v,k) for k,v in d.items() if k.startswith('ours') and not k.endswith('ckp'))
    print(s.ljust(16),'%8.2f'%(cb*1e3),' '.join(('%8.3f'%(cb/d[c]) if c in d else '     -  ') for c in cols),'%8.3f'%(cb/old[0]),old[1])
