# tau.gp -- final eval loss of Streaming DiLoCo against the overlap tau,
# one line per merge weight alpha (shades of the method's colour, from
# plots/palette.gp), DP's final loss as a dashed line in DP's colour.
# Input: tau.csv (tau,alpha_0.5,alpha_0) from scenarios/experiments/run.sh.
# usage: gnuplot -e "in='plots/out/experiments/tau.csv'; \
#                    out='plots/out/experiments/tau'; dp=1.88" tau.gp
# Writes OUT.png and OUT.svg; any error exits non-zero.
_dir(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _dir(s, i - 1))
load _dir(ARG0, strlen(ARG0))."../../plots/palette.gp"
if (!exists("in") || !exists("out")) { print "tau.gp: set in and out"; exit status 2 }
if (system(sprintf("test -r '%s' && echo ok", in)) ne "ok") {
  print sprintf("tau.gp: cannot read %s", in)
  exit status 1
}
set datafile separator ","
set title "(c): final eval loss against the overlap tau (H 24, 2 fragments, E3M0)" noenhanced
set xlabel "overlap tau (inner steps)"
set ylabel "final eval loss of the outer parameters (nats per token)"
set grid xtics ytics lt 1 lw 1 lc rgb "#dcdcdc"
set key top left noenhanced box opaque
set xrange [-0.5:10.5]
set xtics (0, 1, 2, 5, 10)

do for [fmt in "pngcairo svg"] {
  if (fmt eq "pngcairo") {
    set terminal pngcairo size 900,600 font "sans,11"
    set output out.".png"
  } else {
    set terminal svg size 900,600 font "sans,11" dynamic
    set output out.".svg"
  }
  plot in using 1:2 every ::1 with linespoints lw 2 pt series_pt(1) \
         lc rgb method_shade("streaming_overlap_fp4", 1, 2) title "alpha 0.5", \
       in using 1:3 every ::1 with linespoints lw 2 pt series_pt(2) dt series_dt(2) \
         lc rgb method_shade("streaming_overlap_fp4", 2, 2) title "alpha 0", \
       (exists("dp") ? dp : NaN) with lines dt 2 lw 2 lc rgb method_color("dp") \
         title "data-parallel"
  unset output
}
