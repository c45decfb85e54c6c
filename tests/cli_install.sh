#!/bin/sh
# cli_install.sh -- `make install DESTDIR=...` of the tree as built (no
# rebuild): the binary, man page, completion, scenarios and plot scripts
# and the documents (README.md, docs/) land under DESTDIR/PREFIX and
# nowhere else, with their modes, and the
# installed binary runs an installed scenario; `make uninstall` removes
# exactly that, and the empty directories it made under share/dilosim.
# Skipped with CLI_QUICK=1 (the sanitizer pass: it installs bin/dilosim,
# the same as the plain pass), but for the first check: the program does
# not link Check (only the test suites do).
# usage: tests/cli_install.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"
# (Debian's Check is a static archive, libsubunit a shared one: neither
# its symbols nor libsubunit may be in the program.)
needed=$(readelf -d "$bin" 2>&1 | grep 'NEEDED')
case $needed in
  *libsubunit*) bad "$bin needs libsubunit.so, which only Check uses" ;;
  *libgsl*) ok ;;
  *) bad "readelf -d $bin lists no libgsl among its libraries" ;;
esac
if nm "$bin" 2>&1 | grep -q ' srunner_run\| suite_create\| tcase_create'; then
  bad "$bin holds Check's functions (srunner_run, suite_create, tcase_create)"
else ok; fi
if [ -n "$CLI_QUICK" ]; then finish cli_install; exit; fi

# A make of its own (not the calling make's variables or jobs); bin/dilosim
# is taken as it is, never rebuilt.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${MAKE:-make} -s -C "$root" \
         -o bin/dilosim "$@"; }
d=$tmp/dest
p=$d/usr/local
expect 0 "make install" -- mk install DESTDIR="$d"
mode() { stat -c %a "$1" 2>"$tmp/null"; }
for f in bin/dilosim:755 share/man/man1/dilosim.1:644 \
         share/bash-completion/completions/dilosim:644 \
         share/dilosim/scenarios/paper/1b.json:644 \
         share/dilosim/scenarios/examples/cost/two_sites.json:644 \
         share/dilosim/plots/figure4.gp:644 share/dilosim/plots/sweeps.sh:755 \
         share/doc/dilosim/README.md:644 share/doc/dilosim/docs/usage.md:644; do
  m=$(mode "$p/${f%:*}")
  if [ "$m" = "${f#*:}" ]; then ok; else bad "install: $p/${f%:*}: mode '$m', expected ${f#*:}"; fi
done
want=$(cd "$root" && { find scenarios -type f; ls plots/*.gp plots/*.sh; } | wc -l)
got=$(find "$p/share/dilosim" -type f | wc -l)
if [ "$want" = "$got" ]; then ok; else bad "install: $got data files, expected $want"; fi
same "$root/scenarios/paper/10b.json" "$p/share/dilosim/scenarios/paper/10b.json" "installed scenario"
want=$(cd "$root" && ls README.md docs/*.md docs/img/*.png | wc -l)
got=$(find "$p/share/doc/dilosim" -type f | wc -l)
if [ "$want" = "$got" ]; then ok; else bad "install: $got documents, expected $want"; fi
# the README's links to docs/ resolve where it is installed
for l in $(grep -o '](docs/[a-z]*\.md)' "$p/share/doc/dilosim/README.md" | sed 's/^](//; s/)$//'); do
  if [ -f "$p/share/doc/dilosim/$l" ]; then ok; else bad "installed README links to missing $l"; fi
done
top=$(cd "$d" && find . -mindepth 1 -maxdepth 2 | LC_ALL=C sort | tr '\n' ' ')
if [ "$top" = "./usr ./usr/local " ]; then ok; else bad "install wrote outside PREFIX: $top"; fi

expect 0 "installed --version" -- "$p/bin/dilosim" --version
contains "$tmp/out" "^dilosim [0-9.]* (" "installed --version"
expect 0 "installed run" -- "$p/bin/dilosim" run "$p/share/dilosim/scenarios/default.json" \
  --set steps=20
contains "$tmp/out" '"compute_utilization"' "installed run"
if command -v man >"$tmp/null"; then
  expect 0 "installed man page" -- env MANWIDTH=80 man -l "$p/share/man/man1/dilosim.1"
  contains "$tmp/out" "dilosim report" "installed man page"
fi

# What is not ours stays: a file in share/dilosim keeps its directory.
: >"$p/share/dilosim/mine.txt"
: >"$p/bin/other"
expect 0 "make uninstall" -- mk uninstall DESTDIR="$d"
left=$(cd "$d" && find . -type f | LC_ALL=C sort | tr '\n' ' ')
if [ "$left" = "./usr/local/bin/other ./usr/local/share/dilosim/mine.txt " ]; then ok
else bad "uninstall left or removed: $left"; fi
rm "$p/share/dilosim/mine.txt" "$p/bin/other"
expect 0 "make install again" -- mk install DESTDIR="$d"
expect 0 "make uninstall again" -- mk uninstall DESTDIR="$d"
left=$(find "$d" -type f | wc -l)
if [ "$left" = 0 ]; then ok; else bad "uninstall left $left files"; fi
absent "$p/share/dilosim" "uninstall"
absent "$p/share/doc/dilosim" "uninstall of the documents"

# Another PREFIX.
expect 0 "make install PREFIX" -- mk install DESTDIR="$d" PREFIX=/opt/dilo
if [ -x "$d/opt/dilo/bin/dilosim" ]; then ok; else bad "PREFIX=/opt/dilo: no binary"; fi
expect 0 "make uninstall PREFIX" -- mk uninstall DESTDIR="$d" PREFIX=/opt/dilo
left=$(find "$d" -type f | wc -l)
if [ "$left" = 0 ]; then ok; else bad "uninstall PREFIX left $left files"; fi

# A PREFIX went to the shell inside double quotes: a backquote ran a
# command, $$HOME expanded, a '"' broke the command.  Every character is
# now the directory's own; nothing runs.
# (make reads "$$" as one "$", and expands "$(...)" itself: the third
# gives the shell "$HOME" and "$(touch ...)".)
rm -rf "$d"
for pre in '/x`touch '"$tmp"'/pwned`y' '/q"uo'"'"'te' '/d$$HOME s$$(touch '"$tmp"'/pwned2)'; do
  expect 0 "make install PREFIX=$pre" -- mk install DESTDIR="$d" PREFIX="$pre"
  absent "$tmp/pwned" "install PREFIX=$pre ran a command"
  absent "$tmp/pwned2" "install PREFIX=$pre ran a command"
  lit=$(printf '%s' "$pre" | sed 's/\$\$/$/g')
  if [ -x "$d$lit/bin/dilosim" ]; then ok; else bad "PREFIX=$pre: no $d$lit/bin/dilosim"; fi
  top=$(cd "$d" && find . -mindepth 1 -maxdepth 1 | wc -l)
  if [ "$top" = 1 ]; then ok; else bad "install PREFIX=$pre wrote elsewhere: $(ls -A "$d")"; fi
  expect 0 "make uninstall PREFIX=$pre" -- mk uninstall DESTDIR="$d" PREFIX="$pre"
  absent "$tmp/pwned" "uninstall PREFIX=$pre ran a command"
  left=$(find "$d" -type f | wc -l)
  if [ "$left" = 0 ]; then ok; else bad "uninstall PREFIX=$pre left $left files"; fi
  rm -rf "$d"
done
finish cli_install
