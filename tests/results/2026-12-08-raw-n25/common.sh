# Sourced by a1.sh-a3.sh: the environment, the bundle, and step() (each step bounded by its own
# limit and by the call's END; a step that does not fit is printed SKIPPED (time)).
set -u
export PATH=$PATH:/usr/local/cuda/bin
for dir in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$dir" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
h=$(cd "$(dirname "$0")/suite" && pwd)
t=/tmp/o; mkdir -p $t
echo "suite $(cat $h/COMMIT); $(nvidia-smi --query-gpu=name,clocks.sm,power.limit --format=csv,noheader)"
s0=$(date +%s); END=${END:-560}
step() { local name=$1 lim=$2; shift 2; local left=$(( END - ($(date +%s) - s0) )); [ $left -lt 20 ] && { echo "$name: SKIPPED (time)"; return; }; [ $lim -gt $left ] && lim=$left; local s=$(date +%s); timeout -k 5 $lim "$@" > $t/$name.log 2>&1; local rc=$?; echo "$name: exit $rc ($(( $(date +%s) - s )) s) | $(grep -cE '^PASS' $t/$name.log) PASS, $(grep -cE '^FAIL' $t/$name.log) FAIL | $(grep -E 'passed|SUMMARY' $t/$name.log | tail -n 1 | cut -c1-120) | $(tail -n 1 $t/$name.log | cut -c1-160)"; grep -E "^FAIL" $t/$name.log | head -5 | cut -c1-200; (cd $t && tar rf ${OUT:-/tmp/out}/$TARNAME.tar $name.log); }
