# loss.gp -- loss curves from `dilosim train` CSV files: a loss column
# against training tokens, one line per file (or per column), the entropy
# floor of Markov data as a dashed line.  Writes OUT.png and OUT.svg.
#
# usage: gnuplot -e "files='a.csv b.csv'" [-e "labels='\"DP\" \"DiLoCo\"'"] \
#                [-e "out='plots/out/loss'"] [-e "title='...'"] \
#                [-e "cols='eval_loss_outer_nats'"] [-e "ymin=1.6; ymax=2.5"] \
#                [-e "logy=1"] plots/loss.gp
#   files   CSV files (space-separated; quote names with spaces)
#   labels  legend entries, one per line (quoted words); default: the
#           file names, or the column names when one file is given
#   cols    the column(s) to plot [eval_loss_outer_nats]; with one file
#           and several columns, one line per column (outer parameters
#           against replica 0 against the average, say)
#   ymin, ymax  loss axis range [automatic]; logy=1: log loss axis
# Any error (an unreadable file, a missing column) exits non-zero.
if (!exists("files")) { print "loss.gp: set files='a.csv ...'"; exit status 2 }
if (!exists("out")) out = "plots/out/loss"
if (!exists("title")) title = "Eval loss against training tokens"
if (!exists("cols")) cols = "eval_loss_outer_nats"
if (!exists("logy")) logy = 0

nf = words(files)
nc = words(cols)
n = nf > nc ? nf : nc
if (nf > 1 && nc > 1 && nf != nc) {
  print "loss.gp: give one file, one column, or as many of each"
  exit status 2
}
file(i) = word(files, nf == 1 ? 1 : i)
col(i) = word(cols, nc == 1 ? 1 : i)
if (exists("labels") && words(labels) != n) {
  print sprintf("loss.gp: %d labels for %d lines", words(labels), n)
  exit status 2
}
basename(f) = system(sprintf("basename '%s' .csv", f))
label(i) = exists("labels") ? word(labels, i) : \
           (nf == 1 && nc > 1 ? col(i) : basename(file(i)))

set datafile separator ","
# Every file readable, every column present; the floor from the first
# file that has one.
floor = NaN
do for [i = 1:n] {
  f = file(i)
  if (system(sprintf("test -r '%s' && echo ok", f)) ne "ok") {
    print sprintf("loss.gp: cannot read %s", f)
    exit status 1
  }
  header = system(sprintf("grep -v '^#' '%s' | head -1", f))
  if (strstrt(header, col(i)) == 0) {
    print sprintf("loss.gp: %s has no column %s", f, col(i))
    exit status 1
  }
  if (floor != floor && strstrt(header, "entropy_floor_nats") > 0) {
    stats f using "entropy_floor_nats" nooutput
    floor = STATS_max
  }
}

palette = "#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf"
color(i) = word(palette, (i - 1) % 10 + 1)

set title title noenhanced
set xlabel "training tokens, all replicas (millions)"
set ylabel "eval loss (nats per token)" . (logy ? ", log scale" : "")
set grid xtics ytics lt 1 lw 1 lc rgb "#dcdcdc"
set key top right noenhanced box opaque
if (logy) set logscale y
if (exists("ymin") && exists("ymax")) set yrange [ymin:ymax]
if (exists("ymin") && !exists("ymax")) set yrange [ymin:*]
if (!exists("ymin") && exists("ymax")) set yrange [*:ymax]
set xrange [0:*]

do for [fmt in "pngcairo svg"] {
  if (fmt eq "pngcairo") {
    set terminal pngcairo size 900,600 font "sans,11"
    set output out.".png"
  } else {
    set terminal svg size 900,600 font "sans,11" dynamic
    set output out.".svg"
  }
  plot for [i = 1:n] file(i) using (column("tokens") / 1e6):(column(col(i))) \
         with linespoints lw 2 pt 7 ps 0.6 lc rgb color(i) title label(i), \
       (floor == floor ? floor : NaN) with lines dt 2 lw 2 lc rgb "black" \
         title (floor == floor ? sprintf("entropy floor (%.4f nats)", floor) : "")
  unset output
}
