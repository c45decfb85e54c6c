#!/bin/sh
# bench_mpi.sh -- points per second of a 10^4-point sweep (a cheap DiLoCo
# world over a 100 x 100 bandwidth x latency grid) on 1, 2 and 4 MPI ranks
# of one thread each, as ratios to the 1-rank run of the same command,
# with rank 0's queue and with static striping; and the cost per point of
# the MPI path against `dilosim sweep --jobs 1` and `--jobs 2` (threads of
# one process), in wall time and in CPU time (all processes, mpirun's
# included).  Then a sweep whose point cost repeats every 3 points (50x
# from the cheapest to the dearest) on 3 ranks, where static striping gives
# one rank nearly all the work.  Every run of a sweep must write the same
# file.  Wall times are the best of BENCH_REPS (default 3) runs,
# interleaved, CPU times their mean: the machine is shared (the load
# average is printed).
# usage: bench/bench_mpi.sh [path/to/dilosim]   (dilosim-mpi next to it)
set -e
bin=${1:-bin/dilosim}
mpi=$(dirname "$bin")/dilosim-mpi
reps=${BENCH_REPS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cat >"$tmp/cheap.json" <<'EOF'
{
  "description": "bench_mpi: a cheap DiLoCo world (about 0.25 ms a point)",
  "model": {"params": 1e9, "layers": 8, "step_time_s": 0.1},
  "workers": {"count": 4},
  "method": {"name": "diloco", "H": 50, "codec": "bf16"},
  "steps": 500,
  "sweep": {"network.bandwidth_gbps": "logspace:-1:3:100",
            "network.latency_ms": "linspace:0:200:100"}
}
EOF
cat >"$tmp/uneven.json" <<'EOF'
{
  "description": "bench_mpi: a point cost that repeats every 3 points",
  "model": {"params": 1e9, "layers": 8, "step_time_s": 0.1},
  "workers": {"count": 4},
  "method": {"name": "diloco", "H": 50, "codec": "bf16"},
  "sweep": {"network.bandwidth_gbps": "logspace:-1:3:40",
            "steps": "200,2000,20000"}
}
EOF
points=10000
load0=$(cut -d' ' -f1 /proc/loadavg)
now() { date +%s.%N; }
cpu() { awk '{ print $16 + $17 }' /proc/$$/stat; } # ticks of waited children
# once NAME CMD...: one run; the least wall time so far in $tmp/NAME.s,
# the CPU time summed in $tmp/NAME.cpu; the output (--out $tmp/NAME.csv)
# checked against the first run's.
once() {
  name=$1; shift
  c0=$(cpu); w0=$(now)
  "$@" --out "$tmp/$name.csv" >"$tmp/null" 2>&1
  w1=$(now); c1=$(cpu)
  awk -v a="$w0" -v c="$w1" -v b="$(cat "$tmp/$name.s" 2>"$tmp/null")" 'BEGIN {
    t = c - a; if (b == "" || t < b) b = t; print b }' >"$tmp/$name.new"
  mv "$tmp/$name.new" "$tmp/$name.s"
  awk -v a="$c0" -v b="$c1" -v s="$(cat "$tmp/$name.cpu" 2>"$tmp/null")" \
    -v hz="$(getconf CLK_TCK)" 'BEGIN { print s + (b - a) / hz }' >"$tmp/$name.new"
  mv "$tmp/$name.new" "$tmp/$name.cpu"
  if [ -e "$tmp/ref.csv" ]; then
    cmp -s "$tmp/ref.csv" "$tmp/$name.csv" ||
      { echo "bench_mpi: $name wrote other bytes" >&2; exit 1; }
  else
    cp "$tmp/$name.csv" "$tmp/ref.csv"
  fi
}
sweep() { "$bin" sweep "$tmp/cheap.json" "$@"; }
ranks() { # RANKS SCHEDULE ARGS...
  n=$1 s=$2; shift 2
  DILOSIM_MPI_SCHEDULE=$s mpirun -q --oversubscribe -np "$n" "$mpi" sweep \
    "$tmp/cheap.json" --jobs 1 "$@"
}
uneven() { # SCHEDULE ARGS...
  s=$1; shift
  DILOSIM_MPI_SCHEDULE=$s mpirun -q --oversubscribe -np 3 "$mpi" sweep \
    "$tmp/uneven.json" --full --jobs 1 "$@"
}
# The runs interleaved, so that a busy moment of the machine spreads over
# every configuration.
for r in $(seq "$reps"); do
  once j1 sweep --jobs 1
  once j2 sweep --jobs 2
  for n in 1 2 4; do once "q$n" ranks "$n" queue; done
  for n in 2 4; do once "s$n" ranks "$n" static; done
done
rm "$tmp/ref.csv"
for r in $(seq "$reps"); do
  once uq uneven queue
  once us uneven static
done
t1=$(now)
for r in $(seq "$reps"); do mpirun -q -np 1 "$mpi" version >"$tmp/null"; done
t2=$(now)
get() { cat "$tmp/$1.s"; }
cpus() { awk -v r="$reps" '{ print $1 / r }' "$tmp/$1.cpu"; }
awk -v n="$points" -v j1="$(get j1)" -v j2="$(get j2)" -v q1="$(get q1)" \
    -v q2="$(get q2)" -v q4="$(get q4)" -v s2="$(get s2)" -v s4="$(get s4)" \
    -v cj1="$(cpus j1)" -v cj2="$(cpus j2)" -v cq1="$(cpus q1)" \
    -v cq2="$(cpus q2)" -v cq4="$(cpus q4)" -v uq="$(get uq)" -v us="$(get us)" \
    -v load="$load0 to $(cut -d' ' -f1 /proc/loadavg)" \
    -v st="$(awk -v a="$t1" -v b="$t2" -v r="$reps" 'BEGIN { print (b - a) / r }')" \
    -v cores="$(nproc)" 'BEGIN {
  printf "bench_mpi: %d-point sweep, 1 thread a rank, on %d cores (4 ranks oversubscribe them), load average %s; best of runs\n", n, cores, load
  printf "bench_mpi: queue:  1 rank %.0f points/s, 2 ranks %.0f (%.2fx), 4 ranks %.0f (%.2fx)\n", n / q1, n / q2, q1 / q2, n / q4, q1 / q4
  printf "bench_mpi: static: 2 ranks %.0f points/s (%.2fx), 4 ranks %.0f (%.2fx)\n", n / s2, q1 / s2, n / s4, q1 / s4
  printf "bench_mpi: threads: --jobs 1 %.0f points/s, --jobs 2 %.0f (%.2fx)\n", n / j1, n / j2, j1 / j2
  printf "bench_mpi: MPI path over threads: %+.1f us a point at 1 rank vs --jobs 1, %+.1f us at 2 ranks vs --jobs 2 (mpirun start-up %.2f s, counted in)\n", (q1 - j1) / n * 1e6, (q2 - j2) / n * 1e6, st
  printf "bench_mpi: without the start-up: %+.1f us and %+.1f us a point\n", (q1 - st - j1) / n * 1e6, (q2 - st - j2) / n * 1e6
  printf "bench_mpi: CPU a point: --jobs 1 %.0f us, --jobs 2 %.0f us; 1 rank %.0f us, 2 ranks %.0f us, 4 ranks %.0f us (start-up included)\n", cj1 / n * 1e6, cj2 / n * 1e6, cq1 / n * 1e6, cq2 / n * 1e6, cq4 / n * 1e6
  printf "bench_mpi: a cost repeating every 3 points, 3 ranks: queue %.2f s, static %.2f s (queue %.2fx faster)\n", uq, us, us / uq }'
