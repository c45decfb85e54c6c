#!/bin/sh
# rig.sh -- one case of the network rig: M network namespaces joined by
# shaped veth links, a ring all-reduce over TCP between them
# (netrig_ring), then everything removed again.
#
# Topology (names dlsrig-<pid>-*, addresses 198.18.0.0/24, the range set
# aside for benchmarks, RFC 2544; nothing is linked to the root namespace):
#
#   ns dlsrig-<pid>-w<i>: rig0 198.18.0.<i+1>/24 (tbf: the up link, rate R)
#        |  veth pair
#   ns dlsrig-<pid>-hub:  p<i> (tbf: the down link toward worker i, rate R),
#                         a port of bridge br0 (no address)
#
# so that worker i owns an up link carrying what it sends and a down link
# carrying what it receives, as dilosim models it.  IPv6 is off in every
# namespace (no stray router or neighbour traffic on the links).
#
# The namespaces (and the temporary directory $TMPDIR/dlsrig-<pid>-*) are
# removed on exit, on failure and on SIGINT, SIGTERM and SIGHUP; those of
# a process dlsrig-<pid>-* that no longer exists (a run killed with
# SIGKILL) are removed at the start.  The root namespace's interfaces,
# routes and qdiscs are never touched: every command runs with `ip -n`,
# `tc -n` or `ip netns exec`, and each veth is created inside its worker's
# namespace with its peer in the hub's.
#
# usage: bench/netrig/rig.sh [options]   (root; --help)
me=rig.sh
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

usage() {
  cat <<EOF
usage: bench/netrig/rig.sh [options]
One case of the network rig (needs root): M network namespaces dlsrig-PID-w<i>
and a hub dlsrig-PID-hub with a bridge, each worker's up and down link shaped
by tbf at RATE; a UDP ping w0 -> w1, then H ring all-reduces of SIZE bytes
(netrig_ring) with GAP idle seconds between them; everything removed at the end.
Prints netrig_ring's CSV, preceded by comment lines: the rig's settings, the
ping's round-trip times, the bytes and packets each tbf sent during the
collectives.
  -m, --workers M    workers, 2..16 (default 2)
  -r, --rate MBIT    rate of every up and down link, Mbit/s (default 100)
  -s, --size BYTES   all-reduce size in bytes, a multiple of 4*M (default 1000000)
  -n, --count H      collectives (default 4)
  -g, --gap S        idle seconds between collectives (default 0)
  -p, --ping N       UDP round trips measured before (default 20; 0: none)
  -o, --out FILE     write the CSV to FILE (whole or not at all), not stdout
  -b, --bin DIR      directory of netrig_ring (default build/netrig)
  -u, --mtu BYTES    MTU of every veth, 576..65535 (default 1500)
  -c, --cc NAME      congestion control of the ring's sockets (default: the
                     namespace's, the kernel's default)
  --corrupt          spoil rank 0's last result before its check (for the tests:
                     the run must then fail)
  -h, --help         this help
Exit status: 0 done; 1 a runtime failure (setup, a rank, a wrong result,
leftover namespaces); 2 a usage error, not root, or ip/tc missing.
EOF
}

die()  { echo "$me: $*" >&2; exit 1; }
udie() { echo "$me: $*" >&2; exit 2; }
# isnum VALUE MIN MAX [int]: VALUE is a number in [MIN, MAX] (an integer with int)
isnum() {
  case $1 in ''|*[!0-9.]*|*.*.*|.) return 1;; esac
  if [ "$4" = int ]; then case $1 in *.*) return 1;; esac; fi
  awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v + 0 >= lo && v + 0 <= hi) }'
}
# num VAR OPTION VALUE MIN MAX [int]: VAR=VALUE, or a usage error
num() {
  kind="a number"
  [ "$6" != int ] || kind="an integer"
  isnum "$3" "$4" "$5" "$6" || udie "$2: '$3' is not $kind in [$4, $5]"
  eval "$1=\$3"
}

M=2 rate=100 size=1000000 count=4 gap=0 ping=20 out= bindir=$root/build/netrig cc= mtu=1500 corrupt=
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0;;
    -m|--workers|-r|--rate|-s|--size|-n|--count|-g|--gap|-p|--ping|-o|--out|-b|--bin|\
    -c|--cc|-u|--mtu)
      [ $# -ge 2 ] || udie "$1 needs a value"
      case $1 in
        -m|--workers) num M --workers "$2" 2 16 int;;
        -r|--rate) num rate --rate "$2" 0.001 100000;;
        -s|--size) num size --size "$2" 4 4000000000 int;;
        -n|--count) num count --count "$2" 1 100000 int;;
        -g|--gap) num gap --gap "$2" 0 3600;;
        -p|--ping) num ping --ping "$2" 0 100000 int;;
        -u|--mtu) num mtu --mtu "$2" 576 65535 int;;
        -o|--out) out=$2;;
        -b|--bin) bindir=$2;;
        -c|--cc) cc=$2;;
      esac
      shift 2;;
    --corrupt) corrupt=--corrupt; shift;;
    *) udie "unknown argument '$1' (see --help)";;
  esac
done
[ $((size % (4 * M))) = 0 ] || udie "--size $size is not a multiple of 4*M = $((4 * M))"
ring=$bindir/netrig_ring
[ -x "$ring" ] || die "$ring: not built (make validate-net builds it)"
[ "$(id -u)" = 0 ] || udie "needs root (network namespaces and tc); run it as root"
command -v ip >/dev/null 2>&1 && ip netns list >/dev/null 2>&1 ||
  udie "'ip netns' is not available (iproute2)"
command -v tc >/dev/null 2>&1 || udie "'tc' is not available (iproute2)"

P=dlsrig-$$-
hub=${P}hub
tmp=$(mktemp -d "${TMPDIR:-/tmp}/${P}XXXXXX") || die "mktemp failed"
ring_pid=

# The rig's namespaces: every name that starts with prefix $1.
our_netns() { ip netns list 2>/dev/null | awk -v p="$1" 'index($1, p) == 1 { print $1 }'; }
# Removes the namespaces of prefix $1, killing what still runs in them.
remove_netns() {
  for ns in $(our_netns "$1"); do
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
}
cleanup() {
  trap '' INT TERM HUP
  if [ -n "$ring_pid" ]; then kill "$ring_pid" 2>/dev/null; wait "$ring_pid" 2>/dev/null; fi
  remove_netns "$P"
  rm -rf "$tmp"
  [ -z "$out" ] || rm -f "$out.tmp.$$"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Namespaces of runs that died without their cleanup (SIGKILL).
for ns in $(our_netns dlsrig-); do
  pid=$(echo "$ns" | sed -n 's/^dlsrig-\([0-9][0-9]*\)-.*/\1/p')
  if [ -n "$pid" ] && [ "$pid" != $$ ] && [ ! -d "/proc/$pid" ]; then
    echo "$me: removing $ns, left by process $pid that no longer runs" >&2
    remove_netns "dlsrig-$pid-"
    rm -rf "${TMPDIR:-/tmp}/dlsrig-$pid-"*
  fi
done

# tbf: a bucket of at least 3 full frames (it must exceed the MTU) or 200 us
# at the rate; a queue of at least 64 KiB or 50 ms at the rate.
burst=$(awk -v r="$rate" -v f=$((3 * (mtu + 14))) \
  'BEGIN { b = r * 1e6 / 8 * 200e-6; printf "%d", b < f ? f : b }')
limit=$(awk -v r="$rate" 'BEGIN { l = r * 1e6 / 8 * 0.05; printf "%d", l < 65536 ? 65536 : l }')
shape() { # NS DEV
  tc -n "$1" qdisc replace dev "$2" root tbf rate "${rate}mbit" burst "$burst" limit "$limit"
}
no_ipv6() {
  ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
    net.ipv6.conf.default.disable_ipv6=1 >/dev/null
}
setup() {
  ip netns add "$hub" && no_ipv6 "$hub" &&
    ip -n "$hub" link add br0 type bridge && ip -n "$hub" link set br0 up || return 1
  i=0
  while [ $i -lt "$M" ]; do
    w=${P}w$i
    ip netns add "$w" && no_ipv6 "$w" && ip -n "$w" link set lo up &&
      ip -n "$w" link add rig0 type veth peer name "p$i" netns "$hub" &&
      ip -n "$w" addr add "198.18.0.$((i + 1))/24" dev rig0 &&
      ip -n "$w" link set rig0 mtu "$mtu" && ip -n "$hub" link set "p$i" mtu "$mtu" &&
      ip -n "$w" link set rig0 up &&
      ip -n "$hub" link set "p$i" master br0 &&
      ip -n "$hub" link set "p$i" up &&
      shape "$w" rig0 && shape "$hub" "p$i" || return 1
    i=$((i + 1))
  done
}
setup 2>"$tmp/err" || die "setting up the namespaces failed: $(head -1 "$tmp/err")"

# tbf's counters of every link: "w<i> up|down BYTES PACKETS DROPPED" lines.
tbf_stats() {
  i=0
  while [ $i -lt "$M" ]; do
    tc -s -n "${P}w$i" qdisc show dev rig0 | awk -v l="w$i up" \
      '$1 == "Sent" { sub(",", "", $7); print l, $2, $4, $7 }'
    tc -s -n "$hub" qdisc show dev "p$i" | awk -v l="w$i down" \
      '$1 == "Sent" { sub(",", "", $7); print l, $2, $4, $7 }'
    i=$((i + 1))
  done
}

# A command in the background, so that a signal's trap runs at once.
bg_run() { "$@" & ring_pid=$!; wait "$ring_pid"; st=$?; ring_pid=; return $st; }
# The ranks' watchdog: 60 s plus four times the collectives at the rate.
timeout=$(awk -v s="$size" -v r="$rate" -v h="$count" -v g="$gap" \
  'BEGIN { printf "%d", 60 + h * (g + 4 * 8 * s / (r * 1e6)) }')

{
  echo "# netrig rig: workers $M, rate $rate Mbit/s on every up and down link" \
       "(tbf burst $burst bytes, limit $limit bytes), MTU $mtu, hub bridge," \
       "namespaces ${P}*"
  echo "# host: $(uname -sr), $(getconf _NPROCESSORS_ONLN) CPUs," \
       "load average $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$tmp/head"
if [ "$ping" -gt 0 ]; then
  bg_run "$ring" --prefix "$P" --ping "$ping" --timeout 30 >"$tmp/ping" ||
    die "the ping between ${P}w0 and ${P}w1 failed"
  awk -F, 'NR == 3 { printf "# rtt_ms min %s median %s mean %s max %s (UDP ping w0 -> w1)\n",
                     $1, $2, $3, $4 }' "$tmp/ping" >>"$tmp/head"
fi
tbf_stats >"$tmp/before"
head -1 /proc/stat >"$tmp/cpu"
bg_run "$ring" --prefix "$P" --workers "$M" --size "$size" --count "$count" --gap "$gap" \
  --timeout "$timeout" ${cc:+--cc "$cc"} $corrupt >"$tmp/ring" || die "the ring all-reduce failed"
tbf_stats >"$tmp/after"
head -1 /proc/stat >>"$tmp/cpu"
# the host's CPU time during the collectives (every process, not only the rig's)
awk '{ busy = $2 + $3 + $4 + $7 + $8 + $9; all = busy + $5 + $6 }
     NR == 1 { b = busy; a = all }
     NR == 2 && all > a { printf "# host cpu busy %.0f%% during the collectives\n",
                          100 * (busy - b) / (all - a) }' "$tmp/cpu" >>"$tmp/head"
# the bytes and packets each tbf sent during the collectives
paste -d' ' "$tmp/before" "$tmp/after" | awk '{
  printf "# tbf %s %s: %d bytes, %d packets, %d dropped\n", $1, $2, $8 - $3, $9 - $4, $10 - $5 }' \
  >>"$tmp/head"
cat "$tmp/head" "$tmp/ring" >"$tmp/csv"

if [ -n "$out" ]; then
  cp "$tmp/csv" "$out.tmp.$$" && mv "$out.tmp.$$" "$out" || die "$out: write error"
else
  cat "$tmp/csv" || die "write error"
fi
cleanup
trap - EXIT
left=$(our_netns "$P")
[ -z "$left" ] || die "namespaces left behind: $left"
exit 0
