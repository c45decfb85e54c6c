#!/bin/sh
# fetch_src.sh -- the sources of GSL and cJSON for the WebAssembly engine
# (make wasm): Debian's source packages of the versions the native build
# links (libgsl-dev 2.7.1+dfsg-5+deb12u1, libcjson-dev 1.7.15-1+deb12u4),
# fetched from deb.debian.org's pool and unpacked with Debian's patches
# applied into DIR/gsl and DIR/cjson.  Nothing is vendored into the tree
# and the machine's apt configuration is not touched.
#
# Each .dsc is checked against the sha256 pinned below, and dpkg-source
# checks each tarball against the sha256 the .dsc lists, so what is
# compiled is exactly what Debian compiled for the native libraries: the
# same MT19937, exponential and Weibull draws, the same gsl_sf_gamma.
# DEBIAN_POOL replaces the pool's address (a mirror).
# usage: sim/wasm/fetch_src.sh DIR
set -eu
dir=${1:?usage: fetch_src.sh DIR}
pool=${DEBIAN_POOL:-http://deb.debian.org/debian/pool/main}
mkdir -p "$dir/dl"
dir=$(cd "$dir" && pwd)

get() { # URL FILE: FILE fetched whole or not at all
    [ -f "$2" ] && return 0
    curl -fsS --retry 2 -o "$2.part" "$1" && mv "$2.part" "$2" || {
        rm -f "$2.part"
        echo "fetch_src.sh: cannot fetch $1" >&2
        exit 1
    }
}

fetch() { # NAME POOL-PATH DSC SHA256-OF-THE-DSC
    [ -f "$dir/$1/.done" ] && return 0
    cd "$dir/dl"
    get "$pool/$2/$3" "$3"
    if ! echo "$4  $3" | sha256sum -c --quiet - >/dev/null 2>&1; then
        echo "fetch_src.sh: $3: not the pinned sha256 $4" >&2
        rm -f "$3"
        exit 1
    fi
    sums=$(awk '/^Checksums-Sha256:/ { on = 1; next }
                /^[^ ]/ { on = 0 }
                on { print $1 "  " $3 }' "$3")
    for f in $(echo "$sums" | awk '{ print $2 }'); do get "$pool/$2/$f" "$f"; done
    if ! echo "$sums" | sha256sum -c --quiet -; then
        echo "fetch_src.sh: $3: a tarball is not the one the .dsc lists" >&2
        exit 1
    fi
    rm -rf "${dir:?}/$1"
    # the .dsc's signature needs no keyring: its sha256 is pinned here
    dpkg-source --no-copy --no-check -x "$3" "$dir/$1" >/dev/null
    touch "$dir/$1/.done"
}

fetch gsl g/gsl gsl_2.7.1+dfsg-5+deb12u1.dsc \
    77bf2b75142d2b19bd0b837dc7a42189704b9451e6f6c8ddeab3d1227a76ed0a
fetch cjson c/cjson cjson_1.7.15-1+deb12u4.dsc \
    764c2de141d680f4fb4cada30c526dacaa30ead061b9b9c34f2b81e2df0f8439
