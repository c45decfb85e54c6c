# cli_lib.sh -- what the command-line test scripts share: a temporary
# directory removed on exit, pass/fail counters and the checks.  A script
# sets bin and root, then sources it:  . "$root/tests/cli_lib.sh"
# and ends with  finish NAME  (prints the counts and the failures again;
# exit status 0 if all passed).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

ok()   { pass=$((pass + 1)); }
bad()  { fail=$((fail + 1)); echo "FAIL: $*"; echo "FAIL: $*" >>"$tmp/failures"; }
# expect CODE DESCRIPTION -- CMD...: runs CMD (stdout to $tmp/out, stderr
# to $tmp/err), checks its exit status.
expect() {
  code=$1 what=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"; got=$?
  if [ "$got" = "$code" ]; then ok; else bad "$what: exit $got, expected $code"; cat "$tmp/err"; fi
}
contains() { if grep -q -- "$2" "$1"; then ok; else bad "$3: '$2' not in $1"; fi; }
lacks()    { if grep -q -- "$2" "$1"; then bad "$3: '$2' in $1"; else ok; fi; }
absent()   { if [ -e "$1" ]; then bad "$2: $1 exists"; else ok; fi; }
same()     { if cmp -s "$1" "$2"; then ok; else bad "$3: $1 and $2 differ"; fi; }
lines()    { n=$(wc -l <"$1"); if [ "$n" = "$2" ]; then ok; else bad "$3: $n lines, expected $2"; fi; }
no_temp()  { if ls "$tmp" | grep -q tmp; then bad "$1: temporary file left"; else ok; fi; }
# reap PID: waits for a background reader (of a FIFO) for up to 5 s, then
# kills it, so that a FIFO nobody writes to cannot hang the tests.
reap()     { i=0
             while kill -0 "$1" 2>"$tmp/reap" && [ $i -lt 100 ]; do
               sleep 0.05; i=$((i + 1))
             done
             kill "$1" 2>"$tmp/reap"; wait "$1" 2>"$tmp/reap"; }
# finish NAME: the counts, then the failures again, where one looks.
finish()   { echo "$1: $pass passed, $fail failed"
             if [ -s "$tmp/failures" ]; then sed "s/^/$1: /" "$tmp/failures"; fi
             [ "$fail" = 0 ]; }
