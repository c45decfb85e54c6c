# studies.gp -- the 100B layout and overlap studies and the bytes moved by
# each method (the Streaming DiLoCo paper's other simulated figures).
# Input: plots/out/{layout_100b,tau_100b,sweep_1b,sweep_10b,sweep_100b}.csv
# and .json from plots/sweeps.sh (the titles come from the JSON, the run's
# resolved inputs, and from the swept values of the CSV).
# usage: gnuplot -e "dir='plots/out'" [-e "fig='tau'"] plots/studies.gp
#   fig  layout, tau or bytes: draw only that figure [all three]
# Writes DIR/layout_100b, DIR/tau_100b and DIR/bytes (.png and .svg).
_dir(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _dir(s, i - 1))
load _dir(ARG0, strlen(ARG0))."palette.gp"
if (!exists("dir")) dir = "plots/out"
if (!exists("fig")) fig = "all"
if (fig ne "all" && fig ne "layout" && fig ne "tau" && fig ne "bytes") {
  print sprintf("studies.gp: fig='%s': expected layout, tau or bytes", fig)
  exit status 2
}
draw(f) = fig eq "all" || fig eq f
set datafile separator ","
set grid xtics ytics mxtics lt 1 lc rgb "#dddddd"
set format x "%g"
upper(s) = system(sprintf("printf %%s '%s' | tr a-z A-Z", s))
size(j) = sprintf("%gB", field(j, "params") / 1e9)

# The rows of one series: column 1 is the variant, 2 the bandwidth, 3 the
# studied key, 4 the compute utilization.
rows(f, v, k) = sprintf("< awk -F, '$1 == \"%s\" && $3 == \"%s\"' %s", v, k, f)
# The values of the studied key (column 3) in the order of the file.
studied(f) = system(sprintf("awk -F, '!/^#/ && n++ && !s[$3]++ { printf \"%%s \", $3 }' %s", f))

do for [fmt in "png svg"] {
  if (fmt eq "png") { set terminal pngcairo size 1000,620 font "sans,11" }
  else { set terminal svg size 1000,620 font "sans,11" dynamic }

  # Sequential against strided fragments.
  if (draw("layout")) {
    j = dir."/layout_100b.json"
    set output dir."/layout_100b.".fmt
    set title sprintf("%s: sequential against strided fragments (%s fragments of " . \
                      "%g layers, H %s, %s)", size(j), field(j, "fragments"), \
                      field(j, "layers") / field(j, "fragments"), field(j, "H"), \
                      field(j, "codec"))
    set logscale x 10
    set xrange [0.1:1000]; set yrange [0:102]
    set xlabel bandwidth_label(j); set ylabel "compute utilization (%)"
    set key bottom right box opaque
    f = dir."/layout_100b.csv"
    plot rows(f, "streaming", "sequential") using 2:($4 * 100) w lp lw 2 pt 7 ps 0.5 \
           lc rgb method_color("streaming") dt 2 title "tau 0, sequential", \
         rows(f, "streaming", "strided") using 2:($4 * 100) w lp lw 2 pt 7 ps 0.5 \
           lc rgb method_color("streaming") title "tau 0, strided", \
         rows(f, "streaming_overlap", "sequential") using 2:($4 * 100) w lp lw 2 pt 7 \
           ps 0.5 lc rgb method_color("streaming_overlap") dt 2 title "tau 1, sequential", \
         rows(f, "streaming_overlap", "strided") using 2:($4 * 100) w lp lw 2 pt 7 \
           ps 0.5 lc rgb method_color("streaming_overlap") title "tau 1, strided"
    unset output
  }

  # Growing overlap: one method, so one colour, a shade per tau (darker
  # first), and a point and dash type per tau.  Lines that (nearly) lie on
  # each other stay visible: drawn from the last tau to the first (the key
  # inverted back), the last one's large open points under the smaller
  # filled points of the others (tau 5 and tau 10 differ by less than
  # half a point of utilization).
  if (draw("tau")) {
    j = dir."/tau_100b.json"
    f = dir."/tau_100b.csv"
    taus = studied(f)
    n = words(taus)
    set output dir."/tau_100b.".fmt
    set title sprintf("%s: compute utilization as the overlap tau grows (%s, %s " . \
                      "fragments, H %s)", size(j), upper(field(j, "codec")), \
                      field(j, "fragments"), field(j, "H"))
    set logscale x 10
    set xrange [0.1:1000]; set yrange [0:102]
    set xlabel bandwidth_label(j); set ylabel "compute utilization (%)"
    set key bottom right box opaque invert
    plot for [i = n:1:-1] rows(f, "streaming_overlap_fp4", word(taus, i)) \
         using 2:($4 * 100) w lp lw 2 dt series_dt(i) pt series_pt(i) \
         ps series_ps(i) lc rgb method_shade("streaming_overlap_fp4", i, n) \
         title "tau ".word(taus, i)
    unset output
    set key noinvert
  }

  # Bytes moved in one run per method and size, both workers: a group of
  # bars per size, a bar per method (the bytes do not depend on the
  # bandwidth: the first row of each method's block).
  if (draw("bytes")) {
    j = dir."/sweep_1b.json"
    set output dir."/bytes.".fmt
    set title sprintf("Bytes put on the WAN in %s inner steps, %s replicas (log scale)", \
                      field(j, "steps"), field(j, "workers"))
    unset logscale x; set logscale y 10
    set xrange [*:*]; set yrange [0.001:1000]
    set style data histograms
    set style histogram clustered gap 1
    set style fill solid 1.0 border -1
    set boxwidth 0.9
    set xlabel "model"; set ylabel "bytes sent, all workers (TB)"
    set key top left
    set format y "%g"
    unset grid; set grid ytics lt 1 lc rgb "#dddddd"
    sizes = "1b 10b 100b"
    meths = "data_parallel diloco streaming streaming_overlap streaming_overlap_fp4"
    keys = "dp diloco streaming streaming_overlap streaming_overlap_fp4"
    array names[5] = ["DP (bf16)", "DiLoCo (bf16)", "Streaming (bf16)", \
                      "Streaming, overlap (bf16)", "Streaming, overlap, E3M0"]
    tb(s, v) = real(system(sprintf("awk -F, '$1 == \"%s\" { print $7 / 1e12; exit }' %s/sweep_%s.csv", v, dir, s)))
    set print dir."/bytes.dat"
    do for [s = 1:3] {
      row = "\"".size(dir."/sweep_".word(sizes, s).".json")."\""
      do for [i = 1:5] { row = row.sprintf(" %g", tb(word(sizes, s), word(meths, i))) }
      print row
    }
    unset print
    set datafile separator whitespace
    set termoption noenhanced
    plot for [i = 1:5] dir."/bytes.dat" using i + 1:xtic(1) title names[i] \
         lc rgb method_color(word(keys, i))
    set datafile separator ","
    set termoption enhanced
    unset output
    unset logscale y; unset style data; set format y "%g"
    set grid xtics ytics mxtics lt 1 lc rgb "#dddddd"
  }
}
