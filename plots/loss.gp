# loss.gp -- loss curves from `dilosim train` CSV files: a loss column
# against training tokens (or the simulated clock, or the inner step), one
# line per file (or per column), the entropy floor of Markov data as a
# dashed line.  Writes OUT.png and OUT.svg.
#
# usage: gnuplot -e "files='a.csv b.csv'" [-e "labels='\"DP\" \"DiLoCo\"'"] \
#                [-e "out='plots/out/loss'"] [-e "title='...'"] \
#                [-e "cols='eval_loss_outer_nats'"] [-e "ymin=1.6; ymax=2.5"] \
#                [-e "x='hours'; logx=1"] [-e "logy=1"] \
#                [-e "colors='dp #1f77b4'; dashes='1 2'"] \
#                [-e "method='streaming_overlap_fp4'"] \
#                [-e "keypos='top right'"] [-e "size='900,600'"] plots/loss.gp
#   files   CSV files (space-separated; quote names with spaces)
#   labels  legend entries, one per line (quoted words); default: the
#           file names, or the column names when one file is given
#   cols    the column(s) to plot [eval_loss_outer_nats]; with one file
#           and several columns, one line per column (outer parameters
#           against replica 0 against the average, say)
#   x       the x axis: tokens (all replicas, millions) [tokens], hours
#           (column sim_time_s / 3600: the simulated wall clock of a
#           coupled run) or step (inner steps).  A DP run with failures
#           repeats the steps it redoes after a rollback: against step its
#           line goes back over itself, against hours it does not
#   ymin, ymax  loss axis range [automatic]; logy=1: log loss axis;
#           logx=1: log x axis, from the first row to the last
#   colors  one colour per line: a method key of plots/palette.gp (dp,
#           diloco, streaming, streaming_overlap, streaming_overlap_fp4,
#           outer, eager, fedpart: that method's colour in every figure)
#           or "#rrggbb" [the palette's colours in turn]
#   method  every line is of this method (a key as above): shades of its
#           colour, darker first, and a point and dash type per line,
#           drawn last line first so that lines on each other stay
#           visible (colors and dashes, when given, still decide)
#   dashes  one gnuplot dash type per line (1 solid, 2 dashed, ...) [1]
#   keypos  where the legend goes [top right]
#   size    the figure's width and height in pixels [900,600]
# Any error (an unreadable file, a missing column, x='hours' on a CSV
# without sim_time_s, a bad x) exits non-zero.
_dir(s, i) = i < 1 ? "" : (s[i:i] eq "/" ? s[1:i] : _dir(s, i - 1))
load _dir(ARG0, strlen(ARG0))."palette.gp"
if (!exists("files")) { print "loss.gp: set files='a.csv ...'"; exit status 2 }
if (!exists("out")) out = "plots/out/loss"
# x is also gnuplot's dummy variable: keep the choice under another name.
xsel = exists("x") ? x : "tokens"
undefine x
if (xsel ne "tokens" && xsel ne "hours" && xsel ne "step") {
  print sprintf("loss.gp: x='%s': expected tokens, hours or step", xsel)
  exit status 2
}
if (!exists("title")) title = "Eval loss against " . \
  (xsel eq "tokens" ? "training tokens" : \
   (xsel eq "hours" ? "the simulated wall clock" : "inner steps"))
if (!exists("logx")) logx = 0
if (!exists("keypos")) keypos = "top right"
if (!exists("size")) size = "900,600"
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
if (exists("colors") && words(colors) != n) {
  print sprintf("loss.gp: %d colors for %d lines", words(colors), n)
  exit status 2
}
if (exists("colors")) {
  do for [i = 1:n] {
    if (!method_known(word(colors, i))) {
      print sprintf("loss.gp: colour '%s': expected #rrggbb or a method of " . \
                    "plots/palette.gp (%s)", word(colors, i), palette_keys)
      exit status 2
    }
  }
}
if (exists("method") && !(method_known(method) && method[1:1] ne "#")) {
  print sprintf("loss.gp: method='%s': expected one of %s", method, palette_keys)
  exit status 2
}
if (exists("dashes") && words(dashes) != n) {
  print sprintf("loss.gp: %d dashes for %d lines", words(dashes), n)
  exit status 2
}
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
  header = system(sprintf("awk '!/^#/ { print; exit }' '%s'", f))
  if (strstrt(header, col(i)) == 0) {
    print sprintf("loss.gp: %s has no column %s", f, col(i))
    exit status 1
  }
  if (xsel eq "hours" && strstrt(header, "sim_time_s") == 0) {
    print sprintf("loss.gp: %s has no column sim_time_s (x='hours' needs " . \
                  "a coupled run, not --lockstep)", f)
    exit status 1
  }
  if (floor != floor && strstrt(header, "entropy_floor_nats") > 0) {
    stats f using "entropy_floor_nats" nooutput
    floor = STATS_max
  }
}

color(i) = exists("colors") ? method_color(word(colors, i)) : \
  (exists("method") ? method_shade(method, i, n) : \
   method_color(word(palette_keys, (i - 1) % words(palette_keys) + 1)))
dash(i) = exists("dashes") ? int(word(dashes, i)) : \
  (exists("method") ? series_dt(i) : 1)
point(i) = exists("method") ? series_pt(i) : 7
psize(i) = exists("method") ? series_ps(i) : 0.6
xval(dummy) = xsel eq "tokens" ? column("tokens") / 1e6 : \
              (xsel eq "hours" ? column("sim_time_s") / 3600 : column("step"))

set title title noenhanced
set xlabel (xsel eq "tokens" ? "training tokens, all replicas (millions)" : \
            (xsel eq "hours" ? "simulated wall clock (hours)" : "inner step")) . \
           (logx ? ", log scale" : "")
set ylabel "eval loss (nats per token)" . (logy ? ", log scale" : "")
set grid xtics ytics lt 1 lw 1 lc rgb "#dcdcdc"
eval sprintf("set key %s noenhanced box opaque", keypos)
if (exists("method")) set key invert
if (logy) set logscale y
if (exists("ymin") && exists("ymax")) set yrange [ymin:ymax]
if (exists("ymin") && !exists("ymax")) set yrange [ymin:*]
if (!exists("ymin") && exists("ymax")) set yrange [*:ymax]
if (logx) { set logscale x; set autoscale xfix } else { set xrange [0:*] }

# The lines and the floor; with a method, drawn last line first and the
# floor before them (the key, inverted, lists them in order).
LINE = "file(i) using (xval(0)):(column(col(i))) with linespoints lw 2 " . \
       "dt dash(i) pt point(i) ps psize(i) lc rgb color(i) title label(i)"
FLOOR = "(floor == floor ? floor : NaN) with lines dt 2 lw 2 lc rgb 'black' " . \
        "title (floor == floor ? sprintf('entropy floor (%.4f nats)', floor) : '')"
do for [fmt in "pngcairo svg"] {
  if (fmt eq "pngcairo") {
    eval "set terminal pngcairo size ".size." font 'sans,11'"
    set output out.".png"
  } else {
    eval "set terminal svg size ".size." font 'sans,11' dynamic"
    set output out.".svg"
  }
  if (exists("method")) {
    plot @FLOOR, for [i = n:1:-1] @LINE
  } else {
    plot for [i = 1:n] @LINE, @FLOOR
  }
  unset output
}
