#!/bin/sh
# cli_report.sh -- `dilosim report`: a page of a small scenario (two
# variants, a train section, 9 grid points), self-contained, escaped and
# the same bytes twice; rendered by headless Chromium, whose DOM must hold
# the figures, the tables and the assumptions and whose screenshot must
# not be blank; errors (no gnuplot, bad options) leave no page behind;
# how sure the plan is (--set-from with a fit block, --seeds).
# usage: tests/cli_report.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"

# A scenario name with every character HTML escapes, in a path that has
# some too.
mkdir "$tmp/a&b<c>"
sc="$tmp/a&b<c>/small.json"
cp "$root/tests/data/report/small.json" "$sc"
grid="--grid logspace:-1:3:9"
cost=$root/tests/data/table/cost.json

expect 0 "report help" -- "$bin" report --help
for o in --variant --cost --target-cu --grid --thresholds --out --quiet --set-from \
         --samples --seed --seeds --sensitivity --mtbf-hours --train-hours; do
  contains "$tmp/out" "$o" "report help lists $o"
done
contains "$tmp/out" "exit status" "report help"
expect 0 "dilosim --help lists report" -- "$bin" --help
contains "$tmp/out" "  report " "dilosim --help"

expect 0 "report" -- "$bin" report "$sc" $grid --cost "$cost" --out "$tmp/r.html"
page=$tmp/r.html
no_temp "report"
if [ -s "$tmp/err" ]; then bad "report wrote on stderr off a terminal: $(cat "$tmp/err")"; else ok; fi
n=$(grep -c '<svg' "$page")
if [ "$n" = 2 ]; then ok; else bad "report: $n <svg> figures, expected 2 (CU, loss)"; fi
for t in 'class="assumptions"' 'class="thresholds"' 'class="bytes"' \
         'class="plan"' 'class="cost"' 'class="train"' '<h3>Assumptions</h3>' \
         'compute utilization (%)' 'streaming.e3m0-v1' 'Cheapest that meets the target:' \
         '<figcaption>' 'entropy floor of the data'; do
  contains "$page" "$t" "report page"
done
# escaped: the name and the path, never raw
contains "$page" 'report &lt;test&gt; &amp; &quot;quotes&quot;' "name escaped"
contains "$page" 'a&amp;b&lt;c&gt;/small.json' "path escaped"
if grep -q 'report <test>' "$page" || grep -q 'a&b<c>' "$page"; then
  bad "report: unescaped text in the page"; else ok; fi
# self-contained: no script, nothing to fetch
if grep -qi '<script\|<link\|<img\|<iframe\|@import\|src=\|href="http\|url(http' "$page"; then
  bad "report: the page is not self-contained"; else ok; fi
# ids prefixed per figure: none repeats
dups=$(grep -o ' id="[^"]*"\| id='"'"'[^'"'"']*'"'" "$page" | sort | uniq -d | head -3)
if [ -z "$dups" ]; then ok; else bad "report: repeated ids: $dups"; fi
# the same bytes again, and --variant picks
"$bin" report "$sc" $grid --cost "$cost" >"$tmp/r2.html" 2>"$tmp/err"
same "$page" "$tmp/r2.html" "report twice"
# the threshold table heads its rows with the names people read
sed -n '/class="thresholds"/,/<\/table>/p' "$page" >"$tmp/thr"
contains "$tmp/thr" '<th>Data-parallel, bf16 gradients (dp)</th>' "thresholds: the label"
# --grid-gco2-per-kwh: the plan's energy and emissions in a table of
# their own; without workers.power_w one line, exit 2, no page
expect 0 "report grid" -- "$bin" report "$sc" $grid \
  --set 'workers.power_w={"busy": 500, "idle": 50}' --grid-gco2-per-kwh 300 \
  --out "$tmp/g.html"
contains "$tmp/g.html" "emissions at 300 g CO2 per kWh" "report grid: the note"
contains "$tmp/g.html" "<th>kg CO2/month</th>" "report grid: the table"
lacks "$page" "kWh/month" "report without a grid: no energy table"
expect 2 "report grid without power" -- "$bin" report "$sc" $grid \
  --grid-gco2-per-kwh 300 --out "$tmp/g2.html"
lines "$tmp/err" 1 "report grid without power: one line"
contains "$tmp/err" "dp: --grid-gco2-per-kwh needs workers.power_w" \
  "report grid without power: the message"
absent "$tmp/g2.html" "report grid without power: no page"

# A scenario in binary Gbit: its sweep's CSV opens with a comment line.
expect 0 "report, binary Gbit" -- "$bin" report "$root/scenarios/paper/1b.json" \
  --variant diloco --grid 1,10 --quiet --out "$tmp/bin.html"
contains "$tmp/bin.html" '<svg' "report, binary Gbit: the CU figure"
expect 0 "report --variant" -- "$bin" report "$sc" $grid --variant dp --quiet
if grep -q 'streaming.e3m0-v1' "$tmp/out"; then bad "--variant dp shows the other"; else ok; fi
contains "$tmp/out" '<th>Data-parallel, bf16 gradients (dp)</th>' "--variant dp: its label"

# The summary box opens the page: before the first figure and the
# assumptions (which come last); what to buy is a listed speed of the cost
# file (1 or 10 Gbit/s), with separators and the currency; the CU figure
# has the target line and the marker at the option bought; legends and
# tables name methods as people do.
at() { grep -n "$1" "$page" | head -1 | cut -d: -f1; }
s_at=$(at '<section id="summary">'); f_at=$(at '<figure>'); a_at=$(at '<h3>Assumptions</h3>')
if [ -n "$s_at" ] && [ "$s_at" -lt "$f_at" ] && [ "$s_at" -lt "$a_at" ]; then ok
else bad "summary at line $s_at, first figure $f_at, assumptions $a_at"; fi
t_at=$(at '<h3>Training: loss'); if [ "$a_at" -gt "$t_at" ]; then ok; else bad "assumptions before the training"; fi
contains "$page" '<p class="buy">Buy 10 Gbit/s per worker link (USD 2,000/month per link): ' \
  "summary: buy a listed speed, its price"
contains "$page" 'total USD [0-9]\{1,3\}\(,[0-9]\{3\}\)*/month' "summary: a total with separators"
contains "$page" '<li>runner-up: ' "summary: the runner-up"
contains "$page" '<li>margin to the target at 10 Gbit/s: every latency x2 CU [0-9.]* ([+-][0-9.]*); efficiency 0.6 CU ' \
  "summary: the margins at the option"
contains "$page" '<li>link load at 10 Gbit/s: average ' "summary: the headroom"
contains "$page" '<li>Quality, eval loss (nats) at equal steps (100): Data-parallel, bf16 gradients (dp) [0-9.]*; ' \
  "summary: quality from the coupled runs"
contains "$page" 'At equal simulated time ([0-9.]* s' "summary: quality at equal time"
contains "$page" 'not of the planned model' "summary: the caveat"
contains "$page" '<text>target CU 0.95</text>' "CU figure: the target line"
contains "$page" '<text>buy: 10 Gbit/s</text>' "CU figure: the marker"
contains "$page" '<text>Data-parallel, bf16 gradients (dp)</text>' "legend: the label"
contains "$page" '<span class="sw" style="background:#d55e00"></span>Data-parallel' \
  "tables: the method's colour, as in the figures"
# every total in the cost table is the sum of its parts as printed
python3 - "$page" <<'EOF' && ok || bad "report: cost totals are not the sum of their parts"
import re, sys
t = open(sys.argv[1]).read()
table = t[t.index('<table class="cost">'):]
table = table[:table.index('</table>')]
rows = re.findall(r'<tr><th>.*?</th>(.*?)</tr>', table)
assert rows
for r in rows:
    if '<td class="num">' not in r: continue
    c = [x.replace(',', '') for x in re.findall(r'<td class="num">([^<]*)</td>', r)]
    wan, busy, idle, total = float(c[2]), float(c[3]), float(c[4]), float(c[5])
    assert abs(wan + busy + idle - total) <= 2, r
EOF
expect 0 "report --sensitivity --train-hours" -- "$bin" report "$sc" $grid --cost "$cost" \
  --variant streaming.e3m0-v1 --sensitivity --mtbf-hours 1 --train-hours 0.01 --quiet
contains "$tmp/out" '<table class="sens">' "report --sensitivity: its table"
contains "$tmp/out" '<th>MTBF 1 h</th>' "report --mtbf-hours"
contains "$tmp/out" 'failures at MTBF 1 h CU ' "report --sensitivity: CU at the option"
contains "$tmp/out" '<table class="training">' "report --train-hours: its table"
contains "$tmp/out" '<li>whole training at 10 Gbit/s: ' "report --train-hours: in the summary"
expect 2 "report --mtbf-hours alone" -- "$bin" report "$sc" $grid --mtbf-hours 1
contains "$tmp/err" "^dilosim report: --mtbf-hours is the MTBF of --sensitivity" "report --mtbf-hours alone"

# how sure: --set-from with a fit block (the interval), --seeds (CU over
# the seeds), and their usage errors
fit=$root/tests/data/plan/fit_efficiency.json
expect 0 "report --set-from fit --seeds" -- "$bin" report "$root/tests/data/plan/failures.json" \
  --grid 0.1,10 --target-cu 0.7 --set-from "$fit" --samples 5 --seeds 5 --quiet \
  --out "$tmp/sure.html"
for t in '<th>\[5%, 95%\]</th>' '<table class="seeds">' \
         '5th and 95th percentiles of the least bandwidth over 5 draws of the fitted keys (network.efficiency)' \
         'not the model&#39;s own error' 'CU over 5 seeds' \
         'Gbit/s for the 5th percentile of CU &gt;= 0.7.</p>'; do
  contains "$tmp/sure.html" "$t" "report, how sure"
done
expect 0 "report --seeds, no randomness" -- "$bin" report "$root/tests/data/table/one_layer_dp.json" \
  --grid 1,10 --seeds 3 --quiet
contains "$tmp/out" '<td>no randomness</td>' "report --seeds without randomness"
lacks "$tmp/out" '5%, 95%\]</th>' "report --seeds: no interval without a fit"
for args in "--samples 0" "--seeds x" "--seed -2"; do
  expect 2 "report $args" -- "$bin" report "$sc" $grid --set-from "$fit" $args \
    --out "$tmp/none.html"
  contains "$tmp/err" "^dilosim report: .*(see 'dilosim report --help')$" "report $args: usage"
done
expect 2 "report --samples without a fit" -- "$bin" report "$sc" $grid --samples 5 \
  --out "$tmp/none.html"
absent "$tmp/none.html" "report, how sure: errors"

# the assumptions say what the run uses: the latency matrix (not the
# unused latency_ms), completion, transport, efficiency, overhead, ring order
cat >"$tmp/net.json" <<'EOF'
{"model": {"params": 1e8, "layers": 4, "step_time_s": 0.1},
 "workers": {"count": 3},
 "network": {"bandwidth_gbps": 10, "collective": "star", "completion": "member",
             "latency_matrix_ms": [[0, 10, 50], [10, 0, 50], [50, 50, 0]],
             "transport": "tcp", "tcp_init_window_kb": 64, "efficiency": 0.95,
             "collective_overhead_ms": 2.5, "ring_order": [1, 0, 2]},
 "method": {"name": "diloco", "H": 10}, "steps": 20, "seed": 1}
EOF
expect 0 "report of a latency matrix" -- "$bin" report "$tmp/net.json" --grid 1,10 --quiet
for t in '<th>one-way latency, ms</th><td>per pair, from row to column: 0, 10, 50; 10, 0, 50; 50, 50, 0</td>' \
         '<th>a worker passes an all-reduce</th><td>member: once it has its own result</td>' \
         '<th>transport</th><td>tcp: slow start from 64 kB, restart after idle</td>' \
         '<th>payload share of the line rate</th><td>0.95</td>' \
         '<th>overhead per collective step</th><td>2.5 ms</td>' \
         '<th>ring order (star: hub first)</th><td>1, 0, 2</td>'; do
  contains "$tmp/out" "$t" "report assumptions"
done
lacks "$tmp/out" '<th>one-way latency, ms</th><td>0</td>' "report assumptions: latency_ms unused"

# curve titles are whole: two sweep values sharing their first 1100 bytes
# are two curves (the title "description=aaa...a1" and "...a2"), not one
long=$(awk 'BEGIN { while (n++ < 1100) printf "a" }')
cat >"$tmp/long.json" <<EOF
{"model": {"params": 1e8, "layers": 4, "step_time_s": 0.1},
 "network": {"bandwidth_gbps": 10}, "method": {"name": "diloco", "H": 10},
 "steps": 20, "seed": 1, "sweep": {"description": "${long}1,${long}2"}}
EOF
expect 0 "report of long titles" -- "$bin" report "$tmp/long.json" --grid 1,10 --quiet
n=$(grep -c '<g id="s1-cu-gnuplot_plot_[0-9]*"' "$tmp/out")
# two curves, the target line and the marker of the option bought
if [ "$n" = 4 ]; then ok; else bad "report of long titles: $n curves, expected 4"; fi

# errors: one line, the right status, no page
printf 'old\n' >"$tmp/keep.html"
expect 1 "report without gnuplot" -- env PATH=/nonexistent-dilosim "$bin" report "$sc" \
  $grid --out "$tmp/keep.html"
contains "$tmp/err" "gnuplot: not found on PATH" "no gnuplot"
lines "$tmp/err" 1 "no gnuplot message"
contains "$tmp/keep.html" "old" "no gnuplot: the file is left alone"
expect 2 "report bad grid" -- "$bin" report "$sc" --grid 3,2 --out "$tmp/none.html"
expect 2 "report bad target" -- "$bin" report "$sc" --target-cu 2
expect 2 "report stdin" -- "$bin" report - --out "$tmp/none.html"
expect 2 "report unknown variant" -- "$bin" report "$sc" --variant nope --out "$tmp/none.html"
contains "$tmp/err" 'unknown variant "nope"' "unknown variant"
expect 2 "report no scenario" -- "$bin" report
absent "$tmp/none.html" "report errors"
no_temp "report errors"

# Two scenarios, one page; then the browser.
[ -n "$CLI_QUICK" ] || {
expect 0 "report of two" -- "$bin" report "$sc" "$root/scenarios/default.json" $grid \
  --out "$tmp/two.html"
n=$(grep -c '<section id="s[12]">' "$tmp/two.html")
if [ "$n" = 2 ]; then ok; else bad "report of two: $n sections"; fi
contains "$tmp/two.html" '<text>Streaming DiLoCo, H 100, overlap 1, 4-bit</text>' \
  "a base's curve is titled by its method"
contains "$tmp/two.html" '<h3>[^<]*scenarios/default.json</h3>' "the summary of two: each scenario's"

chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
if [ -z "$chrome" ]; then
  echo "cli_report: chromium not found, the rendering checks are skipped"
else
  run_chrome() {
    timeout 120 "$chrome" --headless --no-sandbox --disable-gpu \
      --user-data-dir="$tmp/chrome" --window-size=1200,2000 "$@" \
      "file://$page" 2>"$tmp/chrome.err"
  }
  run_chrome --dump-dom >"$tmp/dom.html"
  n=$(grep -o '<svg' "$tmp/dom.html" | wc -l)
  if [ "$n" -ge 2 ]; then ok; else bad "DOM: $n <svg>, expected 2"; fi
  for t in '<table class="thresholds">' '<table class="assumptions">' \
           '<th>workers (datacenters)</th>' '<th>payload codec</th>' \
           'e3m0, one scale per tensor' '<th>CU ≥ 0.95</th>' '<polyline\|<path'; do
    contains "$tmp/dom.html" "$t" "DOM"
  done
  # the summary box is the first section and in the first screen: a
  # copy of the page with a script (the page itself has none) that
  # writes where each section starts into the DOM Chromium dumps
  sed 's|</body>|<script>var s = document.querySelectorAll("section"), b = s[0];\
for (var i = 0; i < s.length; i++) if (s[i].offsetTop < b.offsetTop) b = s[i];\
document.body.setAttribute("data-first", b.id + " " + (b.offsetTop < innerHeight));</script></body>|' \
    "$page" >"$tmp/probe.html"
  timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --user-data-dir="$tmp/chrome" \
    --window-size=1200,900 --dump-dom "file://$tmp/probe.html" >"$tmp/probe.dom" 2>"$tmp/chrome.err"
  contains "$tmp/probe.dom" 'data-first="summary true"' "DOM: the summary box is first, in the first screen"
  run_chrome --screenshot="$tmp/shot.png" >"$tmp/chrome.out"
  if [ -s "$tmp/shot.png" ] && command -v python3 >"$tmp/null"; then
    set -- $(python3 "$root/tests/png_colors.py" "$tmp/shot.png")
    # 1200 x 2000, text and lines in many colours over more than 5% of it
    if [ "$1 $2" = "1200 2000" ] && [ "$3" -ge 50 ] &&
       awk "BEGIN { exit !($4 > 0.05) }"; then ok
    else bad "screenshot looks blank: ${1}x$2, $3 colours, $4 inked"; fi
  else
    bad "no screenshot: $(tail -3 "$tmp/chrome.err")"
  fi
fi
}
finish cli_report
