#!/bin/sh
# style.sh -- the mechanical part of the house style on every C source:
# no line over 100 columns, no tab, no trailing blank.  The rest of the
# style is .clang-format's.
# usage: tests/style.sh [root]
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 1
bad=$(awk 'length > 100 { print FILENAME ":" FNR ": line of " length " columns" }
           /\t/         { print FILENAME ":" FNR ": tab" }
           /[ ]+$/      { print FILENAME ":" FNR ": trailing blank" }' \
      sim/*.[ch] models/*.[ch] tests/*.[ch] bench/*.c $(ls tests/fuzz/*.c 2>/dev/null))
if [ -n "$bad" ]; then
  printf '%s\n' "$bad"
  echo "style: $(printf '%s\n' "$bad" | wc -l) problems"
  exit 1
fi
echo "style: 1 passed, 0 failed"
