#!/bin/sh
# style.sh -- the mechanical part of the house style on every C source:
# no line over 100 columns, no tab, no trailing blank; and every shell
# script of the tree parses (`sh -n`: a quote in an awk comment once broke
# plots/reproduce.sh, which no test runs); and every Check suite ends with
# CHECK_MAIN (tests/check_main.h: the timeout for a loaded machine, the
# failed tests named last) and sets no tcase timeout under 30 s; the
# include rules of the layers (tests/layers.awk); no production file over
# 900 lines, no function over 80 (tests/limits.awk); no comment naming a
# file that is not in the tree; and the layout of .clang-format.
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
# The layers (tests/layers.awk) and the size limits of production code
# (tests/limits.awk).
prod="sim/*/*.[ch] models/*.[ch]"
lay=$(awk -v EXCEPT=sim/config/scenario_train.h:models/train_config.h \
      -f tests/layers.awk $prod)
[ -z "$lay" ] || bad="$bad${bad:+
}$lay"
lim=$(awk -v MAXFILE=900 -v MAXFN=80 -f tests/limits.awk $prod | sort)
[ -z "$lim" ] || bad="$bad${bad:+
}$lim"
# A path named in a comment or doc string of the sources is a file of the
# tree (docs/x.md, sim/engine/run.c, ...; a name with * is a pattern).
for ref in $(grep -ohE '\b(docs|sim|models|tests|bench|plots|scenarios)/[A-Za-z0-9_./-]*[A-Za-z0-9_]\.(md|c|h|sh|json|gp|mk|awk|1)\b' \
             $prod bench/*.c | sort -u); do
  [ -e "$ref" ] || bad="$bad${bad:+
}$(grep -lF "$ref" $prod bench/*.c | head -1): names $ref, which is not in the tree"
done
for ref in $(grep -ohE '\b[A-Z]+\.md\b' $prod bench/*.c | sort -u); do
  [ -e "$ref" ] || bad="$bad${bad:+
}$(grep -lF "$ref" $prod bench/*.c | head -1): names $ref, which is not in the tree"
done
# The layout is .clang-format's (clang-format 14 and later agree on it).
if command -v clang-format >/dev/null; then
  fmt=$(clang-format --dry-run $prod tests/*.[ch] tests/fuzz/*.c bench/*.c bench/netrig/*.c 2>&1 |
        grep ': warning:' | sed 's/:[0-9]*:[0-9]*: warning:.*//' | sort -u)
  for f in $fmt; do bad="$bad${bad:+
}$f: not as .clang-format lays it out (clang-format -i $f)"; done
else
  echo "style: clang-format is missing (make deps installs it): layout not checked"
fi
if [ -n "$bad" ]; then
  printf '%s\n' "$bad"
  echo "style: $(printf '%s\n' "$bad" | wc -l) problems"
  exit 1
fi
echo "style: 1 passed, 0 failed"
