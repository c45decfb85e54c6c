#!/bin/sh
# cli_demo.sh -- what `make demo` prints, checked figure by figure: each
# row of its table against `dilosim run` of the same variant and
# bandwidth (a separate code path from the sweep the demo reads), and
# the full result it ends with against `dilosim run scenarios/default.json`,
# and its method labels against the variants they name.
# With bin/dilosim (the plain pass) it runs `make demo` itself; otherwise
# (the sanitizer pass) scenarios/demo.sh with the given binary.
# usage: tests/cli_demo.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"

if [ "$bin" -ef "$root/bin/dilosim" ] && [ -z "$CLI_QUICK" ]; then
  expect 0 "make demo" -- make -s --no-print-directory -C "$root" demo
else
  expect 0 "demo.sh" -- sh "$root/scenarios/demo.sh" "$bin"
fi
cp "$tmp/out" "$tmp/demo"

# The table: the rows between the header and the "(sent: ..." note.
sed -n '/^method /,/^(sent:/p' "$tmp/demo" | sed '1d;$d' >"$tmp/rows"
lines "$tmp/rows" 12 "demo table rows"
contains "$tmp/demo" "^method  *Gbit/s  *utilization  *sent (GB)  *wall (s)$" "demo header"

i=0
for v in data_parallel diloco streaming_overlap_fp4; do
  for bw in 1 10 100 1000; do
    i=$((i + 1))
    row=$(sed -n "${i}p" "$tmp/rows")
    "$bin" run "$root/scenarios/paper/1b.json" --variant $v \
      --set network.bandwidth_gbps=$bw >"$tmp/run.json" 2>"$tmp/err" || bad "run $v $bw"
    want=$(awk -F': ' '
      { gsub(/[",]/, "", $1); gsub(/[ ,]/, "", $2); gsub(/ /, "", $1); f[$1] = $2 }
      END { printf "%8s %11.1f%% %12.1f %12.1f", f["up_gbps"],
            100 * f["compute_utilization"], f["bytes_sent_total"] / 1e9,
            f["wall_time_s"] }' "$tmp/run.json")
    got=$(printf '%s\n' "$row" | cut -c26-)
    if [ "$got" = "$want" ]; then ok; else
      bad "demo row $i ($v, $bw Gbit/s): '$got', run says '$want'"; fi
  done
done
# The figures a reader checks first, against closed forms: DP sends the
# bf16 gradient both ways of a 2-worker ring every step (2 bytes x 1e9
# x 1000 steps x 2 workers = 4000 GB), DiLoCo a bf16 copy every H = 100
# steps (40 GB), Streaming its 4-bit fragments (10 GB).
for want in "data-parallel  *1  .*4000.0" "DiLoCo (H 100)  *1  .*40.0" \
            "Streaming (tau 1, E3M0)  *1  .*10.0"; do
  contains "$tmp/rows" "$want" "demo closed-form bytes"
done

# The labels name what the variants are: DiLoCo with H 100, Streaming
# with tau 1 and E3M0 payloads.
"$bin" run "$root/scenarios/paper/1b.json" --variant diloco >"$tmp/d.json"
contains "$tmp/d.json" '^  "H": 100,$' "demo label: DiLoCo's H"
"$bin" run "$root/scenarios/paper/1b.json" --variant streaming_overlap_fp4 >"$tmp/s.json"
contains "$tmp/s.json" '^  "tau": 1,$' "demo label: Streaming's tau"
contains "$tmp/s.json" '^  "codec": "e3m0",$' "demo label: Streaming's codec"

# The full result the demo ends with is `dilosim run scenarios/default.json`.
sed -n '/^The default scenario/,$p' "$tmp/demo" | sed 1d >"$tmp/tail"
"$bin" run "$root/scenarios/default.json" >"$tmp/default.json"
same "$tmp/tail" "$tmp/default.json" "demo's full result"
finish cli_demo
