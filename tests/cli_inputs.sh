#!/bin/sh
# cli_inputs.sh -- command-line tests of inputs and outputs at their edges:
# --out through a descriptor (/dev/stdout, /dev/fd/N, /proc/self/fd/N,
# bash's >(...)) for every command that has one; merge of a FIFO part and
# of a directory; the ranges of model.host_gbps and method.sync_timeout_s,
# the energy keys' errors
# and a run length that counts host copies and collective overheads; the
# cost file's bandwidth limit and byte order mark; errors in a scenario's
# sweep section and in a --vary; "did you mean"; a bad workers.sites; the
# program run through the dynamic loader and valgrind with one thread;
# help texts that point at the man page.
# usage: tests/cli_inputs.sh [path/to/dilosim]   (run by tests/cli.sh)
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"

tiny=$root/tests/data/sweep/tiny.json
sc=$root/scenarios/default.json
smoke=$root/scenarios/train/mlp_smoke.json

# --- --out through a descriptor ------------------------------------------
# A pipe behind /dev/stdout or /dev/fd/N was taken for a file to create
# ("cannot write: No such file or directory", exit 1).  Each form gets the
# bytes a regular --out file gets.
for k in 1 2 3; do
  "$bin" sweep "$tiny" --shard $k/3 --out "$tmp/s$k.csv" 2>"$tmp/err" || bad "shard $k"
done
through() { # NAME CMD ARGS...: every descriptor form against a regular file
  name=$1; shift
  "$@" --out "$tmp/ref" >"$tmp/ref.stdout" 2>"$tmp/err" || bad "$name: regular --out"
  { "$@" --out /dev/stdout 2>"$tmp/err"; echo $? >"$tmp/rc"; } | cat >"$tmp/via"
  if [ "$(cat "$tmp/rc")" = 0 ]; then ok; else bad "$name --out /dev/stdout: exit $(cat "$tmp/rc")"; cat "$tmp/err"; fi
  # what the command prints on stdout besides (train's summary) comes after
  head -n "$(wc -l <"$tmp/ref")" "$tmp/via" >"$tmp/via.head"
  same "$tmp/via.head" "$tmp/ref" "$name --out /dev/stdout | cat"
  for fd in /dev/fd/3 /proc/self/fd/3; do
    { "$@" --out $fd 3>&1 >/dev/null 2>"$tmp/err"; echo $? >"$tmp/rc"; } | cat >"$tmp/via"
    if [ "$(cat "$tmp/rc")" = 0 ]; then ok; else bad "$name --out $fd: exit $(cat "$tmp/rc")"; cat "$tmp/err"; fi
    same "$tmp/via" "$tmp/ref" "$name --out $fd 3>&1 | cat"
  done
  if command -v bash >"$tmp/null"; then
    # $! is the process substitution (bash 4.4 and later): wait for cat
    rm -f "$tmp/via"
    bash -c '"$@" --out >(cat >"$OUTF") >/dev/null; rc=$?; wait $!; exit $rc' \
      sh "$@" 2>"$tmp/err"; got=$?
    if [ "$got" = 0 ]; then ok; else bad "$name --out >(cat): exit $got"; cat "$tmp/err"; fi
    same "$tmp/via" "$tmp/ref" "$name --out >(cat >file)"
  fi
}
export OUTF="$tmp/via"
through run "$bin" run "$tiny"
through sweep "$bin" sweep "$tiny" --jobs 1
through merge "$bin" merge "$tmp/s1.csv" "$tmp/s2.csv" "$tmp/s3.csv"
through table "$bin" table "$tiny" --grid 1,10
through plan "$bin" plan "$tiny" --target-cu 0.5
through train "$bin" train "$smoke" --set steps=20
through report "$bin" report "$tiny"
# --trace too; and a descriptor open for reading only is refused.
{ "$bin" run "$tiny" --set steps=5 --out "$tmp/r.json" --trace /dev/stdout; echo $? >"$tmp/rc"; } |
  cat >"$tmp/trace"
if [ "$(cat "$tmp/rc")" = 0 ]; then ok; else bad "--trace /dev/stdout: exit $(cat "$tmp/rc")"; fi
contains "$tmp/trace" '"traceEvents"' "--trace /dev/stdout | cat"
expect 1 "--out a read-only descriptor" -- \
  sh -c '"$0" run "$1" --out /dev/fd/0 </dev/null' "$bin" "$tiny"
contains "$tmp/err" "/dev/fd/0: cannot write: Bad file descriptor" "--out a read-only descriptor"

# --- merge opens each part once -------------------------------------------
# A FIFO part was opened a second time after its writer had gone: the merge
# hung.  A directory part was "cannot read: Is a directory", exit 1.
"$bin" merge "$tmp/s1.csv" "$tmp/s2.csv" "$tmp/s3.csv" --out "$tmp/m.csv" 2>"$tmp/err" ||
  bad "merge of files"
mkfifo "$tmp/f2"
cat "$tmp/s2.csv" >"$tmp/f2" &
writer=$!
"$bin" merge "$tmp/s1.csv" "$tmp/f2" "$tmp/s3.csv" --out "$tmp/mf.csv" 2>"$tmp/err" &
merger=$!
reap "$merger"; got=$?
reap "$writer"
if [ "$got" = 0 ]; then ok; else bad "merge with a FIFO part: exit $got (143: it hung)"; cat "$tmp/err"; fi
same "$tmp/mf.csv" "$tmp/m.csv" "merge with a FIFO part"
# A pipe part was read to its end by the check: "changed while merging".
cat "$tmp/s3.csv" | "$bin" merge "$tmp/s1.csv" "$tmp/s2.csv" /dev/stdin \
  --out "$tmp/mp.csv" 2>"$tmp/err"; got=$?
if [ "$got" = 0 ]; then ok; else bad "merge with a pipe part: exit $got"; cat "$tmp/err"; fi
same "$tmp/mp.csv" "$tmp/m.csv" "merge with a pipe part"
mkdir "$tmp/part.d"
expect 2 "merge with a directory part" -- "$bin" merge "$tmp/s1.csv" "$tmp/part.d" \
  "$tmp/s3.csv" --out "$tmp/md.csv"
contains "$tmp/err" "^$tmp/part.d: a directory (expected a shard file" "merge with a directory part"
lines "$tmp/err" 1 "merge with a directory part: one line"
absent "$tmp/md.csv" "merge with a directory part"

# --- ranges ---------------------------------------------------------------
# model.host_gbps accepted ~0 (1e-9 with offload_outer: "out of memory",
# exit 1); the run length counts host copies and every collective step's
# overhead (1e6 ms, 100 layers, 1e4 DP steps: a 2e9 s run was accepted).
expect 2 "host_gbps 1e-9" -- "$bin" run "$sc" --set model.host_gbps=1e-9 \
  --set method.offload_outer=true
contains "$tmp/err" "^--set model.host_gbps=1e-9: model.host_gbps: 1e-09 is out of range (expected a number in \[1e-06, 1000000000\])$" \
  "host_gbps 1e-9"
expect 2 "host copies past the clock" -- "$bin" run "$sc" --set model.host_gbps=1e-6 \
  --set method.offload_outer=true
contains "$tmp/err" "model.host_gbps: the run would last about .* s of host copies" \
  "host copies past the clock"
printf '{"model": {"params": 1e6, "layers": 100, "step_time_s": 0.01},\n "method": {"name": "dp", "dp_bucket_mb": 0}, "steps": 10000,\n "network": {"collective_overhead_ms": 1e6}}\n' \
  >"$tmp/overhead.json"
for steps in 10000 100000; do
  expect 2 "overhead, $steps steps" -- "$bin" run "$tmp/overhead.json" --set steps=$steps
  contains "$tmp/err" "^$tmp/overhead.json:3:40: network.collective_overhead_ms: the run would last about" \
    "overhead, $steps steps"
done
# method.sync_timeout_s below 1 ns rounded to 0: no timeout at all.
for t in 5e-10 9.99e-10; do
  expect 2 "sync_timeout_s $t" -- "$bin" run "$tiny" --set method.sync_timeout_s=$t
  contains "$tmp/err" "method.sync_timeout_s: $t is a positive value below 1 ns" "sync_timeout_s $t"
done
expect 0 "sync_timeout_s 1e-9" -- "$bin" run "$tiny" --set method.sync_timeout_s=1e-9
# workers.power_w and network.joules_per_gb: one line with the place,
# exit 2, nothing written.
printf '{"workers": {"count": 2,\n  "power_w": {"busy": 700}},\n "network": {"joules_per_gb": 5}}\n' \
  >"$tmp/power.json"
rm -f "$tmp/power.out"
expect 2 "power_w without idle" -- "$bin" run "$tmp/power.json" --out "$tmp/power.out"
lines "$tmp/err" 1 "power_w without idle: one line"
contains "$tmp/err" "^$tmp/power.json:2:14: workers.power_w: idle is missing (expected both busy and idle, W per accelerator)$" \
  "power_w without idle"
absent "$tmp/power.out" "power_w without idle: nothing written"
expect 2 "joules_per_gb out of range" -- "$bin" run "$tmp/power.json" \
  --set 'workers.power_w={"busy": 700, "idle": 70}' --set network.joules_per_gb=2e9
contains "$tmp/err" "^--set network.joules_per_gb=2e9: network.joules_per_gb: 2000000000 is out of range (expected a number in \[0, 1000000000\])$" \
  "joules_per_gb out of range"
expect 0 "power_w and joules_per_gb" -- "$bin" run "$tmp/power.json" \
  --set 'workers.power_w={"busy": 700, "idle": 70}'
contains "$tmp/out" '"energy_kwh": {"compute_busy": ' "power_w: the run's energy"
# method sparta: a meaningless key is one line, exit 2, and nothing written
# (run and train alike).
expect 2 "subset_fraction without sparta" -- "$bin" run "$tiny" \
  --set method.subset_fraction=0.1 --out "$tmp/sparta.json"
contains "$tmp/err" "^--set method.subset_fraction=0.1: method.subset_fraction: applies to method sparta only (got " \
  "subset_fraction without sparta"
lines "$tmp/err" 1 "subset_fraction without sparta"
absent "$tmp/sparta.json" "subset_fraction without sparta"
expect 2 "sparta with topk" -- "$bin" train "$root/scenarios/train/coupled.json" \
  --set method.name=sparta --set method.codec=topk --out "$tmp/sparta.csv"
contains "$tmp/err" "^--set method.codec=topk: method.codec: topk chooses what it sends, sparta draws its subset" \
  "sparta with topk"
absent "$tmp/sparta.csv" "sparta with topk"

# --- the cost file ----------------------------------------------------------
# bandwidths_gbps allowed 1e15 where a scenario allows 1e9, and the plan
# then failed naming "--set network.bandwidth_gbps=1e+15"; a UTF-8 byte
# order mark was a syntax error.
printf '{"wan_usd_per_gbps_month": 200, "accelerator_usd_per_hour": 2.5,\n "accelerators": 8, "bandwidths_gbps": [1, 1e15]}\n' \
  >"$tmp/cost.json"
for cmd in plan report; do
  case $cmd in plan) more="--target-cu 0.5" ;; *) more="--out $tmp/c.html" ;; esac
  expect 2 "$cmd: a cost bandwidth of 1e15" -- "$bin" $cmd "$tiny" $more --cost "$tmp/cost.json"
  contains "$tmp/err" "^$tmp/cost.json:2:44: bandwidths_gbps\[1\]: must be a number >= 1e-06, at most 1000000000 (got 1e+15)$" \
    "$cmd: a cost bandwidth of 1e15"
  lacks "$tmp/err" "--set" "$cmd: a cost bandwidth of 1e15"
done
printf '\357\273\277{"wan_usd_per_gbps_month": 200, "accelerator_usd_per_hour": 2.5,\n "accelerators": 8, "bandwidths_gbps": [1, 1e9]}\n' \
  >"$tmp/bom.json"
expect 0 "plan: a cost file with a BOM" -- "$bin" plan "$tiny" --target-cu 0.5 --cost "$tmp/bom.json"
contains "$tmp/out" "^monthly cost, USD" "plan: a cost file with a BOM"
expect 0 "report: a cost file with a BOM" -- "$bin" report "$tiny" --cost "$tmp/bom.json" \
  --out "$tmp/c.html"

# --- the sweep section and --vary -------------------------------------------
# Their errors were "--set KEY=VALUE" errors, without a position.
cat >"$tmp/sw.json" <<'EOF'
{
  "model": {"params": 4e6, "layers": 4, "step_time_s": 0.01},
  "steps": 40,
  "sweep": {"network.bandwidth_gbps": [1, -1],
            "network.latency_ms": [0]}
}
EOF
expect 2 "sweep section: a bad value" -- "$bin" sweep "$tmp/sw.json"
contains "$tmp/err" "^point 2 (network.bandwidth_gbps=-1, network.latency_ms=0): $tmp/sw.json:4:43: sweep.network.bandwidth_gbps\[1\]: -1 is out of range" \
  "sweep section: a bad value"
lacks "$tmp/err" "--set" "sweep section: a bad value"
sed 's/latency_ms/latncy_ms/' "$tmp/sw.json" >"$tmp/swk.json"
expect 2 "sweep section: an unknown key" -- "$bin" sweep "$tmp/swk.json" \
  --vary network.bandwidth_gbps=1,2
contains "$tmp/err" "^point 1 (network.bandwidth_gbps=1, network.latncy_ms=0): $tmp/swk.json:5:13: sweep.network.latncy_ms: unknown key (did you mean network.latency_ms?" \
  "sweep section: an unknown key"
printf '{"steps": 40, "sweep": {"method.H": "linspace:1:3:x"}}\n' >"$tmp/spec.json"
expect 2 "sweep section: a bad spec" -- "$bin" sweep "$tmp/spec.json"
contains "$tmp/err" "^$tmp/spec.json:1:37: sweep.method.H: N is not an integer" \
  "sweep section: a bad spec"
expect 2 "a bad --vary" -- "$bin" sweep "$tiny" --vary method.H=0,1
contains "$tmp/err" "): --vary method.H=0,1: method.H: 0 is out of range" "a bad --vary"
lacks "$tmp/err" "--set" "a bad --vary"

# --- did you mean -----------------------------------------------------------
expect 2 "did you mean" -- "$bin" run "$tiny" --set network.bandwith_gbps=3
contains "$tmp/err" "network.bandwith_gbps: unknown key (did you mean network.bandwidth_gbps? expected one of: " \
  "did you mean"
expect 2 "no suggestion for a tie" -- "$bin" run "$tiny" --set faults.mtbr_hours=3
lacks "$tmp/err" "did you mean" "no suggestion for a tie"

# --- workers.sites ------------------------------------------------------------
# A site list that does not match the workers, a bad site, a ring over
# sites with a star: one line at the value, exit 2, nothing written; a
# coupled run (train) of sites whose replicas differ: one line, exit 2.
printf '{"workers": {"count": 3,\n  "sites": [{"replicas": 4}, {"replicas": 2}]}}\n' \
  >"$tmp/sites.json"
expect 2 "sites of another length" -- "$bin" run "$tmp/sites.json" --out "$tmp/sites.out"
echo "$tmp/sites.json:2:12: workers.sites: array of 2 sites (expected workers.count = 3 sites)" >"$tmp/want"
same "$tmp/err" "$tmp/want" "sites of another length: the message"
absent "$tmp/sites.out" "sites of another length: nothing written"
printf '{"workers": {"count": 2,\n  "sites": [{"replicas": 4}, {"replica": 2}]}}\n' \
  >"$tmp/sites.json"
expect 2 "a site's unknown key" -- "$bin" run "$tmp/sites.json" --out "$tmp/sites.out"
echo "$tmp/sites.json:2:31: workers.sites[1].replica: unknown key (did you mean workers.sites[1].replicas? expected one of: replicas, intra_gbps, intra_latency_us)" >"$tmp/want"
same "$tmp/err" "$tmp/want" "a site's unknown key: the message"
absent "$tmp/sites.out" "a site's unknown key: nothing written"
printf '{"workers": {"count": 2, "sites": [{"replicas": 4}, {"replicas": 2}]},\n  "network": {"collective": "star", "site_allreduce": "ring"}}\n' \
  >"$tmp/sites.json"
expect 2 "one ring over sites with a star" -- "$bin" run "$tmp/sites.json" --out "$tmp/sites.out"
echo "$tmp/sites.json:2:29: network.collective: \"star\" cannot be combined with network.site_allreduce \"ring\" (expected \"ring\", or site_allreduce \"hierarchical\")" >"$tmp/want"
same "$tmp/err" "$tmp/want" "one ring over sites with a star: the message"
absent "$tmp/sites.out" "one ring over sites with a star: nothing written"

expect 2 "a coupled run of sites that differ" -- "$bin" train "$smoke" \
  --set 'workers.sites=[{"replicas": 2}, {"replicas": 3}]' --out "$tmp/sites.out"
echo "$smoke: train: site 1 has 3 replicas and site 0 has 2 (expected every site of the same number in a coupled run)" >"$tmp/want"
same "$tmp/err" "$tmp/want" "a coupled run of sites that differ: the message"
absent "$tmp/sites.out" "a coupled run of sites that differ: nothing written"
# --- a membership trace: one line with its file:line:col, exit 2, nothing --
mkdir -p "$tmp/mb"
printf '{"workers": {"count": 2},\n "faults": {"membership_trace": "m.txt"}}\n' \
  >"$tmp/mb/s.json"
printf '1 1 leave\n2 1 leave\n' >"$tmp/mb/m.txt"
expect 2 "membership trace: a leave of an absent worker" -- \
  "$bin" run "$tmp/mb/s.json" --out "$tmp/mb/r.json"
lines "$tmp/err" 1 "membership trace: one line"
contains "$tmp/err" "s.json:2:33: faults.membership_trace: $tmp/mb/m.txt:2:5: worker 1 leaves but is absent since line 1 (expected a join before its next leave)" \
  "membership trace: the message"
absent "$tmp/mb/r.json" "membership trace: nothing written"
printf '1 2 join\n' >"$tmp/mb/m.txt"
expect 2 "membership trace: an unknown worker" -- "$bin" run "$tmp/mb/s.json"
contains "$tmp/err" "m.txt:1:3: worker 2 out of range (expected a worker 0..1)" \
  "membership trace: an unknown worker"
expect 2 "quorum above workers.count" -- "$bin" run "$tmp/mb/s.json" \
  --set 'faults.membership_trace="/dev/null"' --set method.quorum=3
contains "$tmp/err" "method.quorum: 3 is above workers.count 2 (expected 1..2)" \
  "quorum above workers.count"

# --- wrappers: the dynamic loader, valgrind, one thread ----------------------
# Start-up re-executed /proc/self/exe to set OpenBLAS's thread count: run
# through the dynamic loader, that is the loader, which took "run" for the
# program; under valgrind, valgrind's tool.  (Skipped under the
# sanitizers, CLI_QUICK=1: valgrind cannot run them.)
"$bin" run "$tiny" >"$tmp/direct.json" 2>"$tmp/err"
loader=$(readelf -l "$bin" 2>"$tmp/null" | sed -n 's/.*interpreter: \(.*\)]$/\1/p')
if [ -n "$CLI_QUICK" ]; then echo "cli_inputs: sanitizer build: loader and valgrind checks skipped"
elif [ -x "$loader" ]; then
  expect 0 "through the dynamic loader" -- "$loader" "$bin" run "$tiny"
  same "$tmp/out" "$tmp/direct.json" "through the dynamic loader"
  if command -v valgrind >"$tmp/null"; then
    expect 0 "valgrind" -- valgrind -q --error-exitcode=3 "$bin" run "$tiny" --set steps=20
  else echo "cli_inputs: no valgrind: valgrind check skipped"; fi
  # One thread: OpenBLAS's own (started as it loads) are ended at start.
  mkdir "$tmp/tk"
  env -u OPENBLAS_NUM_THREADS "$loader" "$bin" run "$sc" --set steps=100000000 \
    --trace "$tmp/tk/t.json" --quiet >"$tmp/null" 2>&1 &
  pid=$!
  i=0
  while [ $i -lt 200 ] && ! ls "$tmp/tk" | grep -q tmp; do sleep 0.05; i=$((i + 1)); done
  n=$(ls "/proc/$pid/task" 2>"$tmp/null" | wc -l)
  kill "$pid"; wait "$pid" 2>"$tmp/null"
  if [ "$n" = 1 ]; then ok; else bad "threads of a run: $n, expected 1"; fi
else echo "cli_inputs: no dynamic loader found: loader checks skipped"; fi

# --- help texts and the man page --------------------------------------------
# sweep --help sent readers to README.md, which is not installed; the man
# page named /usr/local/share/dilosim whatever the prefix.
for c in run sweep merge table plan train report; do
  "$bin" $c --help >"$tmp/help"
  lacks "$tmp/help" "README" "$c --help names no README"
done
"$bin" --help >"$tmp/help"
contains "$tmp/help" "'man dilosim'" "dilosim --help points at the man page"
lacks "$root/docs/dilosim.1" "/usr/local/share/dilosim" "man page: no fixed data directory"
contains "$root/docs/dilosim.1" '^\.IR PREFIX /share/dilosim/scenarios/' "man page: the data directory under PREFIX"

finish cli_inputs
