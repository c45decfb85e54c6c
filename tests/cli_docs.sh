#!/bin/sh
# cli_docs.sh -- the manual page and the bash completion against the
# program: the page renders without a warning, documents every command of
# `dilosim --help`, every option of each command's --help (as an entry of
# that command's section, or of COMMON OPTIONS), every key the scenario
# loader's tables accept (sim/config/scenario*.c), every
# exit status and --version; the completion offers the commands, exactly
# each command's options, scenario files and the variants of a scenario.
# usage: tests/cli_docs.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"
man=$root/docs/dilosim.1
comp=$root/docs/dilosim.bash-completion

# --- The page renders cleanly -------------------------------------------
if groff -man -ww -z "$man" 2>"$tmp/groff.err" && [ ! -s "$tmp/groff.err" ]; then ok
else bad "groff warnings: $(head -3 "$tmp/groff.err")"; fi
if command -v man >"$tmp/null"; then
  if MANWIDTH=80 man --warnings -l "$man" >"$tmp/man.out" 2>"$tmp/man.err" &&
     [ ! -s "$tmp/man.err" ] && [ -s "$tmp/man.out" ]; then ok
  else bad "man --warnings: $(head -3 "$tmp/man.err")"; fi
fi

# --- What the page documents ---------------------------------------------
# The source with continuation lines joined, fonts and \& dropped, \- and
# \(dq made plain; then every entry tag (the line after .TP) as "SECTION
# WORD" lines, a section being the .SS (or .SH) it stands in.
sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' "$man" |
  sed -e 's/\\f[BIRP]//g' -e 's/\\&//g' -e 's/\\-/-/g' -e 's/\\(dq/"/g' \
      -e 's/\\c$//' >"$tmp/page"
awk '/^\.S[HS] / { sec = $0; sub(/^\.S[HS] +/, "", sec); gsub(/"/, "", sec) }
     tag { n = split($0, w, /[ ",]+/)
           for (i = 2; i <= n; i++) if (w[i] != "") print sec "\t" w[i] }
     { tag = ($0 == ".TP") }' "$tmp/page" >"$tmp/tags"
tagged() { grep -qxF "$(printf '%s\t%s' "$1" "$2")" "$tmp/tags"; }

cmds=$("$bin" --help | awk '/^commands:/ { on = 1; next }
                            on && /^  [a-z]/ { print $1 }')
if [ -n "$cmds" ]; then ok; else bad "no commands in dilosim --help"; fi
for c in $cmds; do
  if grep -qx "\.SS $c" "$tmp/page"; then ok; else bad "man: no section for $c"; fi
  [ "$c" = version ] && continue
  "$bin" "$c" --help >"$tmp/help" || bad "$c --help"
  # the options a help lists: the first of each line that starts with one
  for o in $(sed -n 's/^  *\(-[a-z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p' "$tmp/help" |
             sort -u); do
    if tagged "$c" "$o" || tagged "COMMON OPTIONS" "$o"; then ok
    else bad "man: $c $o is not documented"; fi
  done
done
if grep -q -- '^\.B dilosim --version' "$tmp/page"; then ok; else bad "man: --version"; fi
v=$("$bin" --version | awk '{ print $2 }')
if grep -q "^\.TH DILOSIM 1 .* \"dilosim $v\" " "$tmp/page" &&
   grep -q "dilosim $v (" "$tmp/page"; then ok
else bad "man: not the version of dilosim --version ($v)"; fi
for s in 0 1 2; do
  if tagged "EXIT STATUS" "$s"; then ok; else bad "man: exit status $s"; fi
done

# Every dotted key of the loader's tables: a field table is
# `[static ]const [scn__]field NAME[] = {` ... `K_END}`, its keys the
# first string of each K_*( or .key =; K_OBJ("key", table) nests (the
# last key may share its line with K_END).
awk 'match($0, /const (scn__)?field [A-Za-z_]+\[\] = \{/) {
       t = $0; sub(/.*field /, "", t); sub(/\[.*/, "", t); cur = t }
     cur != "" {
       line = $0
       while (match(line, /(K_[A-Z0-9]+\("[^"]+"|\.key = "[^"]+")/)) {
         m = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
         k = m; sub(/^[^"]*"/, "", k); sub(/"$/, "", k)
         n[cur]++; key[cur, n[cur]] = k
         if (m ~ /^K_OBJ/) {
           s = line; sub(/^, */, "", s); sub(/[^A-Za-z0-9_].*/, "", s)
           child[cur, n[cur]] = s } }
       if (/K_END/) cur = "" }
     function walk(t, prefix,   i) {
       for (i = 1; i <= n[t]; i++)
         if ((t, i) in child) walk(child[t, i], prefix key[t, i] ".")
         else print prefix key[t, i] }
     END { walk("root_fields", "") }' \
  "$root"/sim/config/scenario*.c >"$tmp/keys"
nk=$(wc -l <"$tmp/keys")
if [ "$nk" -ge 80 ]; then ok; else bad "only $nk scenario keys found in the tables"; fi
cut -f2 "$tmp/tags" >"$tmp/words"
while read -r k; do
  if grep -qxF "$k" "$tmp/words"; then ok; else bad "man: scenario key $k is not documented"; fi
done <"$tmp/keys"

# --- Bash completion -----------------------------------------------------
if command -v bash >"$tmp/null"; then
  mkdir -p "$tmp/c/sub"
  : >"$tmp/c/a.json"; : >"$tmp/c/b.txt"
  # complete WORD...: the completions of the last word, one a line
  cat >"$tmp/complete.bash" <<'EOF'
. "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_dilosim
[ ${#COMPREPLY[@]} = 0 ] || printf '%s\n' "${COMPREPLY[@]}" | LC_ALL=C sort
EOF
  complete() { bash "$tmp/complete.bash" "$comp" "$@"; }
  complete dilosim "" >"$tmp/words"
  for c in $cmds; do contains "$tmp/words" "^$c\$" "completion of the commands"; done
  contains "$tmp/words" "^--version\$" "completion of --version"
  for c in $cmds; do
    [ "$c" = version ] && continue
    complete "$bin" "$c" -- >"$tmp/got"
    "$bin" "$c" --help | sed -n 's/^  *\(-[a-z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p' |
      LC_ALL=C sort -u >"$tmp/want"
    same "$tmp/want" "$tmp/got" "completion of $c's options (want, got)"
  done
  complete dilosim table --c >"$tmp/got"
  contains "$tmp/got" "^--csv\$" "completion of --c"
  lines "$tmp/got" 1 "completion of --c"
  complete "$bin" run "$root/scenarios/paper/1b.json" --variant str >"$tmp/got"
  printf 'streaming\nstreaming_overlap\nstreaming_overlap_fp4\n' >"$tmp/want"
  same "$tmp/want" "$tmp/got" "completion of --variant"
  complete "$bin" run "$root/scenarios/default.json" --variant "" >"$tmp/got"
  lines "$tmp/got" 0 "completion of --variant without variants"
  complete dilosim run "$tmp/c/" >"$tmp/got"
  printf '%s\n' "$tmp/c/a.json" "$tmp/c/sub" >"$tmp/want"
  same "$tmp/want" "$tmp/got" "completion of a scenario file"
  complete dilosim run x.json --out "$tmp/c/b" >"$tmp/got"
  printf '%s\n' "$tmp/c/b.txt" >"$tmp/want"
  same "$tmp/want" "$tmp/got" "completion of --out"
  complete dilosim report x.json y.json "$tmp/c/a" >"$tmp/got"
  printf '%s\n' "$tmp/c/a.json" >"$tmp/want"
  same "$tmp/want" "$tmp/got" "completion of a third scenario"
fi
finish cli_docs
