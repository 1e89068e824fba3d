import sys, re
cur=None; seen={}
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"^  (\S.*?) \((\d+), (\d+), (\d+)\)x\((\d+), (\d+), (\d+)\), Context", line)
    if m:
        cur = [m.group(1)[:150], "grid %s,%s,%s block %s" % (m.group(2), m.group(3), m.group(4), m.group(5))]
        seen.setdefault(cur[0], cur); continue
    if cur is None: continue
    for key in ("Cluster Size", "gpu__time_duration.sum", "Registers Per Thread", "Dynamic Shared Memory Per Block"):
        if key in line and len(cur) < 8:
            cur.append(key.split()[0] + " " + " ".join(line.split()[-2:]))
for k, v in seen.items():
    print(" | ".join(v))
