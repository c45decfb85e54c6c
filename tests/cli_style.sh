#!/bin/sh
# cli_style.sh -- tests/style.sh catches what it promises: on a copy of
# the tree it passes, then each planted fault fails it with its own
# message: an include across the layers (config including the engine, a
# command including the trainer), a function over 80 lines, a production
# file over 900, a comment naming a file that is not in the tree, and a
# line .clang-format would lay out otherwise.
# usage: tests/cli_style.sh [path/to/dilosim]   (run by tests/cli.sh; the
# program is not used, so the sanitizer pass, CLI_QUICK=1, skips it)
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"
if [ -n "$CLI_QUICK" ]; then finish cli_style; exit; fi

t=$tmp/tree
mkdir -p "$t"
(cd "$root" && cp -r .clang-format sim models tests bench scenarios plots "$t/")
cp -r "$root/docs" "$t/" 2>/dev/null
style() { (cd "$t" && sh tests/style.sh "$t") >"$tmp/out" 2>&1; }

# plant FILE TEXT EXPECTED WHAT: TEXT appended to FILE makes style.sh
# fail and say EXPECTED; FILE is restored afterwards.
plant() {
  cp "$t/$1" "$tmp/saved"
  printf '%s\n' "$2" >>"$t/$1"
  if style; then bad "$4: style.sh passed"; else ok; fi
  contains "$tmp/out" "$3" "$4"
  cp "$tmp/saved" "$t/$1"
}

if style; then ok; else bad "style.sh fails on the tree as it is"; cat "$tmp/out"; fi

plant sim/config/kinds.c '#include "sim/engine/net.h"' \
  'layer config) may not include sim/engine/net.h' "config including the engine"
plant sim/cli/cli_run.c '#include "models/nn.h"' \
  'layer cli) may not include models/nn.h' "a command including the trainer"
plant models/data.h '#include "sim/engine/run.h"' \
  'layer models) may not include sim/engine/run.h' "the trainer including the engine"

long="int planted_long(int x) {"
i=0
while [ $i -lt 80 ]; do long="$long
    x += $i;"; i=$((i + 1)); done
long="$long
    return x;
}"
plant sim/base/rng.c "$long" 'function planted_long has 83 lines' "a function over 80 lines"

filler=$(awk 'BEGIN { for (i = 0; i < 900; i++) print "/* filler */" }')
plant sim/base/version.c "$filler" 'sim/base/version.c: 9' "a file over 900 lines"

plant sim/base/pool.c '/* see docs/nowhere.md */' \
  'names docs/nowhere.md, which is not in the tree' "a comment naming a missing file"

if command -v clang-format >/dev/null; then
  plant sim/base/msg.c 'int planted_format(void){return 1;}' \
    'sim/base/msg.c: not as .clang-format lays it out' "a line .clang-format would change"
fi

finish cli_style
