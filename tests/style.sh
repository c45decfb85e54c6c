#!/bin/sh
# style.sh -- the mechanical part of the house style on every C source:
# no line over 100 columns, no tab, no trailing blank; and every shell
# script of the tree parses (`sh -n`: a quote in an awk comment once broke
# plots/reproduce.sh, which no test runs); and every Check suite ends with
# CHECK_MAIN (tests/check_main.h: the timeout for a loaded machine, the
# failed tests named last) and sets no tcase timeout under 30 s.  The rest
# of the style is .clang-format's.
# usage: tests/style.sh [root]
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 1
bad=$(awk 'length > 100 { print FILENAME ":" FNR ": line of " length " columns" }
           /\t/         { print FILENAME ":" FNR ": tab" }
           /[ ]+$/      { print FILENAME ":" FNR ": trailing blank" }' \
      sim/*/*.[ch] models/*.[ch] tests/*.[ch] bench/*.c $(ls tests/fuzz/*.c 2>/dev/null))
for f in $(git ls-files '*.sh' 2>/dev/null || ls tests/*.sh plots/*.sh bench/*.sh \
           scenarios/*.sh scenarios/*/*.sh tests/fuzz/*.sh); do
  out=$(sh -n "$f" 2>&1) || bad="$bad${bad:+
}$f: does not parse: $out"
done
for f in tests/test_*.c; do
  grep -q '^CHECK_MAIN(' "$f" || bad="$bad${bad:+
}$f: does not end with CHECK_MAIN (tests/check_main.h)"
done
short=$(grep -n 'tcase_set_timeout([^,]*, *\([0-9]\|[12][0-9]\))' tests/test_*.c)
[ -z "$short" ] || bad="$bad${bad:+
}$short: a tcase timeout under 30 s"
if [ -n "$bad" ]; then
  printf '%s\n' "$bad"
  echo "style: $(printf '%s\n' "$bad" | wc -l) problems"
  exit 1
fi
echo "style: 1 passed, 0 failed"
