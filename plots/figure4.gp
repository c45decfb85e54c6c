# figure4.gp -- compute utilization against bandwidth for the Streaming
# DiLoCo paper's five methods, one panel per model size (its Figure 4).
# Input: plots/out/sweep_{1b,10b,100b}.csv and .json from plots/sweeps.sh
# (the panel titles come from the JSON: the run's resolved inputs).
# usage: gnuplot -e "dir='plots/out'" plots/figure4.gp
_dir(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _dir(s, i - 1))
load _dir(ARG0, strlen(ARG0))."palette.gp"
if (!exists("dir")) dir = "plots/out"
set datafile separator ","
methods = "data_parallel diloco streaming streaming_overlap streaming_overlap_fp4"
keys = "dp diloco streaming streaming_overlap streaming_overlap_fp4"
array label[5] = ["Data-parallel (bf16)", "DiLoCo (bf16)", \
                  "Streaming DiLoCo (bf16)", "Streaming DiLoCo, overlap 1 (bf16)", \
                  "Streaming DiLoCo, overlap 1, E3M0"]
sizes = "1b 10b 100b"
array title[3]
do for [s = 1:3] {
  j = dir."/sweep_".word(sizes, s).".json"
  title[s] = sprintf("%gB: %s layers, %s s/step", field(j, "params") / 1e9, \
                     field(j, "layers"), field(j, "step_time_s"))
}
replicas = field(dir."/sweep_1b.json", "workers")
pick(m) = (strcol(1) eq m) ? column(3) * 100 : NaN

set logscale x 10
set xrange [0.1:1000]
set yrange [0:102]
set ytics 0, 20, 100
set grid xtics ytics mxtics lt 1 lc rgb "#dddddd"
set xlabel bandwidth_label(dir."/sweep_1b.json")
unset key
set format x "%g"

do for [fmt in "pngcairo svg"] {
  if (fmt eq "pngcairo") {
    set terminal pngcairo size 1800,620 font "sans,11"
    set output dir."/figure4.png"
  } else {
    set terminal svg size 1800,620 font "sans,11" dynamic
    set output dir."/figure4.svg"
  }
  set multiplot title "Compute utilization against WAN bandwidth, ".replicas." replicas (dilosim; cf. Streaming DiLoCo, Figure 4)" font ",13"
  do for [s = 1:3] {
    set origin (s - 1) / 3.0, 0.1
    set size 1 / 3.0, 0.82
    set title title[s]
    set ylabel (s == 1 ? "compute utilization (%)" : "")
    f = dir."/sweep_".word(sizes, s).".csv"
    plot for [i = 1:5] f using 2:(pick(word(methods, i))) every ::1 \
         with linespoints lw 2 pt 7 ps 0.5 lc rgb method_color(word(keys, i)) \
         notitle
  }
  # The legend: an empty plot across the bottom strip.
  set origin 0, 0
  set size 1, 0.1
  unset border; unset tics; unset xlabel; unset ylabel; unset title; unset grid
  unset logscale x
  set xrange [0:1]; set yrange [0:1]
  set key horizontal center center maxrows 1 font ",11" samplen 3 width 1
  plot for [i = 1:5] NaN with linespoints lw 2 pt 7 ps 0.5 \
       lc rgb method_color(word(keys, i)) title label[i]
  unset key; set border; set tics; set grid xtics ytics mxtics lt 1 lc rgb "#dddddd"; set logscale x 10
  set xrange [0.1:1000]; set yrange [0:102]
  set xlabel bandwidth_label(dir."/sweep_1b.json")
  unset multiplot
  unset output
}
