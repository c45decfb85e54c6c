# studies.gp -- the 100B layout and overlap studies and the bytes moved by
# each method (the Streaming DiLoCo paper's other simulated figures).
# Input: plots/out/{layout_100b,tau_100b,sweep_1b,sweep_10b,sweep_100b}.csv
# from plots/sweeps.sh.  usage: gnuplot -e "dir='plots/out'" plots/studies.gp
if (!exists("dir")) dir = "plots/out"
set datafile separator ","
set grid xtics ytics mxtics lt 1 lc rgb "#dddddd"
set format x "%g"
xlab = "bandwidth between datacenters (Gbit/s, 1 Gbit = 2^{30} bit; log scale)"

# The rows of one series: column 1 is the variant, 2 the bandwidth, 3 the
# studied key, 4 the compute utilization.
rows(f, v, k) = sprintf("< awk -F, '$1 == \"%s\" && $3 == \"%s\"' %s", v, k, f)

do for [fmt in "png svg"] {
  if (fmt eq "png") { set terminal pngcairo size 1000,620 font "sans,11" }
  else { set terminal svg size 1000,620 font "sans,11" dynamic }

  # Sequential against strided fragments.
  set output dir."/layout_100b.".fmt
  set title "100B: sequential against strided fragments (36 fragments of 3 layers, H 100, bf16)"
  set logscale x 10
  set xrange [0.1:1000]; set yrange [0:102]
  set xlabel xlab; set ylabel "compute utilization (%)"
  set key bottom right box opaque
  f = dir."/layout_100b.csv"
  plot rows(f, "streaming", "sequential") using 2:($4 * 100) w lp lw 2 pt 7 ps 0.5 lc rgb "#2ca02c" dt 2 title "tau 0, sequential", \
       rows(f, "streaming", "strided") using 2:($4 * 100) w lp lw 2 pt 7 ps 0.5 lc rgb "#2ca02c" title "tau 0, strided", \
       rows(f, "streaming_overlap", "sequential") using 2:($4 * 100) w lp lw 2 pt 7 ps 0.5 lc rgb "#9467bd" dt 2 title "tau 1, sequential", \
       rows(f, "streaming_overlap", "strided") using 2:($4 * 100) w lp lw 2 pt 7 ps 0.5 lc rgb "#9467bd" title "tau 1, strided"
  unset output

  # Growing overlap.
  set output dir."/tau_100b.".fmt
  set title "100B: compute utilization as the overlap tau grows (E3M0, 36 fragments, H 500)"
  f = dir."/tau_100b.csv"
  taus = "0 1 2 5 10"
  plot for [i = 1:5] rows(f, "streaming_overlap_fp4", word(taus, i)) \
       using 2:($4 * 100) w lp lw 2 pt 7 ps 0.5 title "tau ".word(taus, i)
  unset output

  # Bytes moved per method, 1000 steps, both workers: one bar per method
  # and size (the bytes do not depend on the bandwidth: row 2 of each
  # method's block).
  set output dir."/bytes.".fmt
  set title "Bytes put on the WAN in 1000 inner steps, two replicas (log scale)"
  unset logscale x; set logscale y 10
  set xrange [*:*]; set yrange [0.001:1000]
  set style data histograms
  set style histogram clustered gap 1
  set style fill solid 0.85 border -1
  set boxwidth 0.9
  set xlabel "method"; set ylabel "bytes sent, all workers (TB)"
  set key top right
  set format y "%g"
  set xtics rotate by -20 nomirror
  unset grid; set grid ytics lt 1 lc rgb "#dddddd"
  meths = "data_parallel diloco streaming streaming_overlap streaming_overlap_fp4"
  tb(s, v) = real(system(sprintf("awk -F, '$1 == \"%s\" { print $7 / 1e12; exit }' %s/sweep_%s.csv", v, dir, s)))
  set print dir."/bytes.dat"
  array names[5] = ["DP (bf16)", "DiLoCo (bf16)", "Streaming (bf16)", \
                     "Streaming, overlap (bf16)", "Streaming, overlap, E3M0"]
  do for [i = 1:5] {
    m = word(meths, i)
    print sprintf("\"%s\" %g %g %g", names[i], tb("1b", m), tb("10b", m), tb("100b", m))
  }
  unset print
  set datafile separator whitespace
  set termoption noenhanced
  plot dir."/bytes.dat" using 2:xtic(1) title "1B" lc rgb "#1f77b4", \
       "" using 3 title "10B" lc rgb "#ff7f0e", \
       "" using 4 title "100B" lc rgb "#2ca02c"
  set datafile separator ","
  set termoption enhanced
  unset output
  unset logscale y; unset style data; set xtics norotate; set format y "%g"
}
