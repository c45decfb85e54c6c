#!/bin/sh
# cli_interactive.sh -- `dilosim report --interactive`: without the engine
# module (--wasm to a missing file) the static page, one line on stderr,
# exit 0; with the module (make wasm) and Chromium, the page opened
# headless with several hashes, its figures read from the DOM and
# compared with `dilosim run` / `dilosim plan --json` on the same
# scenario and overrides: CU, bytes and the plan's least bandwidth equal
# as printed (to the last bit; docs/usage.md on libm); errors in the
# hash show the loader's one-line message, as `dilosim run --set` prints
# it.  Parts that cannot run print "skipped: <why>".
# usage: tests/cli_interactive.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"

sc="$tmp/live.json"
cp "$root/scenarios/default.json" "$sc"
grid="--grid logspace:-1:3:9"
# the buckets' defaults are not these figures' business (one line each)
buckets="method.dp_bucket_mb=0"

# ---- without the module: the static page --------------------------------
expect 0 "missing module" -- "$bin" report --interactive "$sc" $grid \
  --wasm "$tmp/none.js" --out "$tmp/static.html"
lines "$tmp/err" 1 "missing module: stderr"
contains "$tmp/err" "make wasm" "missing module: how to build it"
contains "$tmp/err" "$tmp/none.js" "missing module: the path"
expect 0 "plain report" -- "$bin" report "$sc" $grid --out "$tmp/plain.html"
same "$tmp/static.html" "$tmp/plain.html" "missing module: the static page"
DILOSIM_WASM="$tmp/none.js" expect 0 "DILOSIM_WASM missing" -- \
  "$bin" report --interactive "$sc" $grid --out "$tmp/static2.html"
contains "$tmp/err" "$tmp/none.js" "DILOSIM_WASM: the path"
expect 2 "two scenarios" -- "$bin" report --interactive "$sc" "$sc" $grid \
  --wasm "$tmp/none.js" --out "$tmp/two.html"
contains "$tmp/err" "one scenario" "two scenarios: message"
absent "$tmp/two.html" "two scenarios"
printf 'not a module </script>' >"$tmp/bad.js"
expect 1 "not a module" -- "$bin" report --interactive "$sc" $grid \
  --wasm "$tmp/bad.js" --out "$tmp/bad.html"
absent "$tmp/bad.html" "not a module"

# the page's script parses (node's own check; a linter is not assumed)
if command -v node >/dev/null; then
  if node --check "$root/sim/wasm/live.js" 2>"$tmp/node.err"; then ok
  else bad "sim/wasm/live.js does not parse: $(head -3 "$tmp/node.err")"; fi
else
  echo "cli_interactive: skipped: node not found (the script's syntax)"
fi

# ---- with the module ----------------------------------------------------
module=${DILOSIM_WASM:-$root/build/wasm/dilosim-engine.js}
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
if [ ! -f "$module" ]; then
  echo "cli_interactive: skipped: no engine module at $module (make wasm)"
  finish cli_interactive
  exit
fi
expect 0 "interactive page" -- "$bin" report --interactive "$sc" $grid \
  --wasm "$module" --out "$tmp/page.html"
contains "$tmp/page.html" 'id="summary"' "page: the live summary"
contains "$tmp/page.html" '<section id="live">' "page: the panel"
lacks "$tmp/page.html" '<script src=\|<link \|<img src=\|url(http' "page: nothing fetched"
if [ -n "$CLI_QUICK" ]; then
  echo "cli_interactive: skipped: the page in Chromium (CLI_QUICK: the sanitizer pass)"
  finish cli_interactive
  exit
fi
if [ -z "$chrome" ]; then
  echo "cli_interactive: skipped: chromium not found (the page's checks)"
  finish cli_interactive
  exit
fi

# dom HASH: the page's DOM once it has answered, in $tmp/dom.html.
# A profile of its own each time: a browser still closing holds the last.
# The module compiles synchronously, so the page has answered by its load
# event, when --dump-dom reads it (no virtual time needed).
nchrome=0
dom() {
  nchrome=$((nchrome + 1))
  timeout 120 "$chrome" --headless --no-sandbox --disable-gpu \
    --user-data-dir="$tmp/chrome$nchrome" --dump-dom \
    "file://$tmp/$page#$1" >"$tmp/dom.html" 2>"$tmp/chrome.err"
}
# value ID: the data-value of the element with that id in $tmp/dom.html.
value() { sed -n "s/.*id=\"$1\" data-value=\"\\([^\"]*\\)\".*/\\1/p" "$tmp/dom.html" | head -1; }
# field FILE KEY: a number member of `dilosim run`'s or plan's JSON.
field() { sed -n "s/.*\"$2\": \\([^,}]*\\).*/\\1/p" "$1" | head -1; }

# case HASH: the page at HASH against the command line on the same
# overrides (each KEY=VALUE of the hash a --set).
# variant=NAME is --variant NAME.
case_() {
  h=$1 sets=
  for kv in $(echo "$h" | tr '&' ' '); do
    case $kv in
    variant=*) sets="$sets --variant ${kv#variant=}" ;;
    *) sets="$sets --set $kv" ;;
    esac
  done
  dom "$h"
  if ! grep -q 'data-live="ready"' "$tmp/dom.html"; then
    bad "#$h: the page did not answer"; return
  fi
  "$bin" run "$sc" $sets >"$tmp/run.json" 2>"$tmp/run.err" || {
    bad "#$h: dilosim run failed"; return; }
  want=$(field "$tmp/run.json" compute_utilization)
  got=$(value cu)
  if [ -n "$want" ] && [ "$got" = "$want" ]; then ok
  else bad "#$h: #cu data-value '$got', dilosim run '$want'"; fi
  want=$(field "$tmp/run.json" bytes_sent_total)
  got=$(value bytes)
  if [ -n "$want" ] && [ "$got" = "$want" ]; then ok
  else bad "#$h: #bytes data-value '$got', dilosim run '$want'"; fi
  # the parts of the wall time, as `dilosim explain --json` prints them
  # (the page's text of each is JavaScript's: compared as numbers, exact)
  "$bin" explain "$sc" $sets --json >"$tmp/explain.json" 2>&1
  sed -n 's/.*"parts": {\([^}]*\)}.*/\1/p' "$tmp/explain.json" | head -1 | tr ',' '\n' |
    sed 's/^ *"\([a-z_]*\)": \(.*\)$/\1 \2/' >"$tmp/parts.want"
  grep -o '<tr data-part="[a-z_]*" data-value="[^"]*"' "$tmp/dom.html" |
    sed 's/<tr data-part="\([a-z_]*\)" data-value="\([^"]*\)"/\1 \2/' >"$tmp/parts.got"
  if [ -s "$tmp/parts.want" ] && awk 'NR == FNR { w[$1] = $2; n++; next }
       { if (!($1 in w) || w[$1] + 0 != $2 + 0) exit 1; m++ }
       END { exit m != n }' "$tmp/parts.want" "$tmp/parts.got"; then ok
  else bad "#$h: explain parts differ: $(tr '\n' ' ' <"$tmp/parts.got")"; fi
  want=$(sed -n 's/.*"sentence": "\(.*\)"$/\1/p' "$tmp/explain.json" |
         sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g')
  got=$(sed -n 's/.*<p id="live-sentence">\([^<]*\)<.*/\1/p' "$tmp/dom.html")
  if [ -n "$want" ] && [ "$got" = "$want" ]; then ok
  else bad "#$h: sentence '$got', dilosim explain '$want'"; fi
  "$bin" plan "$sc" $sets --target-cu 0.95 --json >"$tmp/plan.json" 2>&1
  want=$(field "$tmp/plan.json" least_gbps)
  got=$(value plan-least)
  if [ -n "$want" ] && [ "$got" = "$want" ]; then ok
  else bad "#$h: #plan-least '$got', dilosim plan '$want'"; fi
}

page=page.html
case_ ""
case_ "method.name=dp&$buckets"
case_ "network.bandwidth_gbps=3&method.tau=2&method.codec=e3m0"
case_ "faults.mtbf_hours=0.01&faults.mttr_hours=0.001"
case_ "faults.mtbf_hours=0.01&faults.mttr_hours=0.001&faults.distribution=weibull&faults.weibull_shape=0.7&method.tau=2"
case_ "workers.count=4&workers.speed=1&network.latency_ms=5"

# a scenario with variants: the method selector's choice is --variant
cp "$root/scenarios/examples/two_sites_10b.json" "$tmp/sites.json"
sc_live=$sc
sc="$tmp/sites.json"
expect 0 "page of variants" -- "$bin" report --interactive "$sc" $grid \
  --wasm "$module" --out "$tmp/sites.html"
page=sites.html
case_ "variant=diloco&network.bandwidth_gbps=2"
contains "$tmp/dom.html" '<option value="streaming_overlap_fp4">' "variants: the selector"
sc=$sc_live page=page.html

# errors in the hash: the loader's line, as `dilosim run --set` prints it
for h in "foo.bar=1" "network.bandwidth_gbps=-1"; do
  dom "$h"
  "$bin" run "$sc" --set "$h" >/dev/null 2>"$tmp/run.err"
  want=$(sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' "$tmp/run.err")
  got=$(sed -n 's/.*id="live-error">\([^<]*\)<.*/\1/p' "$tmp/dom.html")
  if [ -n "$want" ] && [ "$got" = "$want" ]; then ok
  else bad "#$h: #live-error '$got', dilosim run '$want'"; fi
  contains "$tmp/dom.html" 'data-live="error"' "#$h: the page says error"
done
finish cli_interactive
