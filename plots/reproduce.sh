#!/bin/sh
# reproduce.sh -- the Streaming DiLoCo paper's Table 4 from the sweeps of
# plots/sweeps.sh: for each size and method, the first grid bandwidth whose
# compute utilization reaches 50/80/90/95/99% (the paper's convention).
# Writes plots/out/table4.csv with the reference's columns, then prints it
# next to the reference (1B, 10B) with the grid steps between each pair of
# cells, and a summary line.
# usage: plots/reproduce.sh   (after plots/sweeps.sh; both read and write
# $PLOTS_OUT, default plots/out)
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
out=${PLOTS_OUT:-$root/plots/out}
ref=$root/scenarios/paper/table4-reference.csv

for s in 1b:1B:24:0.1 10b:10B:48:0.8 100b:100B:108:4.9; do
  IFS=: read -r file model layers step <<EOF2
$s
EOF2
  awk -F, -v model="$model" -v layers="$layers" -v step="$step" '
    /^#/ { next }            # comment lines (the digest line of a sweep)
    !header++ { next }
    {
      v = $1; b = $2 + 0; cu = $3 + 0
      if (!(v in seen)) { seen[v] = 1; order[++n] = v }
      split("0.5 0.8 0.9 0.95 0.99", th, " ")
      for (i = 1; i <= 5; i++)
        if (!((v, i) in cell) && cu >= th[i]) cell[v, i] = b
    }
    END {
      for (k = 1; k <= n; k++) {
        v = order[k]
        line = model "," layers "," step "," v
        for (i = 1; i <= 5; i++)
          line = line "," (((v, i) in cell) ? sprintf("%.1f", cell[v, i]) : "")
        print line
      }
    }' "$out/sweep_$file.csv"
done > "$out/table4.body"
{ head -1 "$ref"; cat "$out/table4.body"; } > "$out/table4.csv"
rm -f "$out/table4.body"

# Side by side: grid steps between our cell and the paper's (the paper's
# value is matched to the nearest grid point).
awk -F, -v grid="$out/sweep_1b.csv" '
  BEGIN {
    while ((getline line < grid) > 0) {
      split(line, f, ",")
      if (f[2] + 0 > 0 && !(f[2] in gi)) { g[++ng] = f[2] + 0; gi[f[2]] = ng }
    }
  }
  function idx(x,   i, best, d, bd) {
    best = 0; bd = 1e300
    for (i = 1; i <= ng; i++) {
      d = log(g[i]) - log(x); if (d < 0) d = -d
      if (d < bd) { bd = d; best = i }
    }
    return best
  }
  FNR == 1 { next }
  FILENAME ~ /reference/ { for (i = 5; i <= 9; i++) paper[$1, $4, i] = $i; next }
  {
    key = $1 SUBSEP $4
    if (!(($1, $4, 5) in paper)) next
    if ($1 != last) {
      printf "\n%-4s %-22s %s\n", $1, "method", "  CU 50%            CU 80%            CU 90%            CU 95%            CU 99%"
      last = $1
    }
    row = sprintf("%-4s %-22s", $1, $4)
    for (i = 5; i <= 9; i++) {
      total++
      if ($i == "") { row = row sprintf("  %6s (%6s) ---", "-", paper[$1, $4, i]); continue }
      d = idx($i + 0) - idx(paper[$1, $4, i] + 0)
      within += (d >= -1 && d <= 1); exact += (d == 0)
      row = row sprintf("  %6s (%6s) %+2d ", $i, paper[$1, $4, i], d)
    }
    print row
  }
  END {
    printf "\nours (paper) and the grid steps between them, Gbit/s\n"
    printf "%d of %d cells within one grid step, %d exact\n", within, total, exact
  }' "$ref" "$out/table4.csv"

# The eager-updates paper's overlaps (arXiv 2502.12996) in the same columns,
# beside Table 4's streaming_overlap_fp4 row (tau 1, H 100) of the
# Streaming DiLoCo paper: the eager paper's Table 5 reports these setups'
# bandwidths in the same form; the published row compared is Table 4's.
awk -F, '
  FNR == 1 { next }
  FILENAME ~ /reference/ { if ($4 == "streaming_overlap_fp4") paper[$1] = $0; next }
  $4 ~ /^overlap_/ || $4 == "streaming_overlap_fp4" {
    if ($1 != last) {
      printf "\n%-4s %-24s %8s %8s %8s %8s %8s\n", $1, "overlap (ours)", "CU 50%",
             "CU 80%", "CU 90%", "CU 95%", "CU 99%"
      if ($1 in paper) {
        split(paper[$1], p, ",")
        printf "%-4s %-24s %8s %8s %8s %8s %8s\n", $1, "Table 4 overlap_fp4", p[5], p[6],
               p[7], p[8], p[9]
      }
      last = $1
    }
    printf "%-4s %-24s %8s %8s %8s %8s %8s\n", $1, $4, $5, $6, $7, $8, $9
  }
  END { printf "\n1-inner-step (tau 1) and 1-outer-step (eager) FP4 overlaps, Gbit/s\n" }
' "$ref" "$out/table4.csv"
echo
echo "wrote $out/table4.csv"
