#!/bin/sh
# cli_readme.sh -- every figure README.md prints, checked against the
# program.  A ```sh block of one dilosim command followed at once by a
# plain ``` block is an example: the command runs (bin/dilosim replaced by
# the binary under test, from the tree's root) and each line of the block
# must be a line of its output (stdout and stderr).  The demo's excerpt
# (the plain block after the line ending "Its table:") must be lines of what
# scenarios/demo.sh prints.  A few figures of the prose are checked
# against the run's own fields below.  With CLI_QUICK=1 (the sanitizer
# pass) the examples are skipped.
# usage: tests/cli_readme.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"
readme=$root/README.md
cd "$root" || exit 1

# Split the README into examples: $tmp/ex.N.cmd and $tmp/ex.N.want.
awk -v dir="$tmp" '
  function flush() { if (cmd != "" && want != "") { n++
      printf "%s", cmd > (dir "/ex." n ".cmd"); printf "%s", want > (dir "/ex." n ".want")
      close(dir "/ex." n ".cmd"); close(dir "/ex." n ".want") } cmd = ""; want = "" }
  /^```sh$/ { insh = 1; cmd = ""; cmds = 0; next }
  insh && /^```$/ { insh = 0; justsh = (cmds == 1); next }
  insh { cmd = cmd $0 "\n"; if ($0 !~ /\\$/) cmds++; next }
  /^```$/ && !inout { if (justsh) { inout = 1; want = "" } else { plain = 1 } ; justsh = 0; next }
  inout && /^```$/ { inout = 0; flush(); next }
  inout { want = want $0 "\n"; next }
  plain && /^```$/ { plain = 0; next }
  { if ($0 != "") justsh = 0 }
  END { print n > (dir "/ex.count") }' "$readme"
n=$(cat "$tmp/ex.count")
[ "$n" -ge 5 ] && ok || bad "README: only $n examples found"

# The sanitizer pass (CLI_QUICK=1) has checked the figures in the plain
# pass already: there the examples only run, which the other scripts do.
i=1
[ -z "$CLI_QUICK" ] || { echo "cli_readme: sanitizer build: examples skipped"; i=$((n + 1)); }
while [ "$i" -le "$n" ]; do
  cmd=$(sed 's|^bin/dilosim |"$bin" |' "$tmp/ex.$i.cmd")
  case "$cmd" in
    '"$bin" '*) ;;
    *) bad "README example $i is not a dilosim command: $cmd"; i=$((i + 1)); continue ;;
  esac
  eval "$cmd" >"$tmp/got" 2>&1
  while IFS= read -r line; do
    if grep -qxF -- "$line" "$tmp/got"; then ok; else
      bad "README example $i ($(head -1 "$tmp/ex.$i.cmd")): line not in its output: $line"; fi
  done <"$tmp/ex.$i.want"
  i=$((i + 1))
done

# The demo's excerpt.
awk '/Its table:$/ { f = 1; next } f && /^```$/ { if (in_) exit; in_ = 1; next }
     f && in_ { print }' "$readme" >"$tmp/demo.want"
[ -s "$tmp/demo.want" ] && ok || bad "README: no demo excerpt after 'Its table:'"
sh scenarios/demo.sh "$bin" >"$tmp/demo" 2>&1
while IFS= read -r line; do
  if grep -qxF -- "$line" "$tmp/demo"; then ok; else bad "README demo line not in the demo: $line"; fi
done <"$tmp/demo.want"

# The prose: 80 syncs moved 5 GB per worker; a payload of 62.5 MB takes
# 50 ms at 10 Gbit/s and 0.5 s at 1; DP's 4000 GB are 2 bytes x 1e9 x
# 1000 steps x 2 workers.
"$bin" run scenarios/default.json >"$tmp/run.json"
w=$(grep -A1 '"per_worker"' "$tmp/run.json" | sed -n 's/.*"bytes_sent": \([0-9]*\).*/\1/p')
awk -v b="$w" 'BEGIN { exit !(b > 4.99e9 && b < 5.01e9) }' && ok || bad "README: 5 GB per worker ($w)"
contains "$readme" "62.5 MB" "README payload"
awk 'BEGIN { p = 1e9 * 3 / 24 * 4 / 8; exit !(p == 62.5e6 && p * 8 / 10e9 == 0.05 && p * 8 / 1e9 == 0.5) }' \
  && ok || bad "README payload closed form"
contains "$readme" "4000 GB in all" "README DP bytes"
awk 'BEGIN { exit !(2 * 1e9 * 1000 * 2 == 4000e9) }' && ok || bad "README DP closed form"
finish cli_readme
