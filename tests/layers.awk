# layers.awk -- the include rules of the tree (docs/architecture.md,
# "What may include what"), checked on every #include "..." of sim/ and
# models/.  The folders of sim/ are layers, lowest first:
#     base < config < engine < adapter < out < study < cli < mpi < wasm
# a file includes headers of its own layer and of lower ones only;
# models/ (the trainer) includes models/ and sim/base/ only, and only
# sim/adapter/ includes models/ -- but for EXCEPT, the one header through
# which the config reads the trainer's plain-data input.
# usage: awk -v EXCEPT=sim/config/x.h:models/y.h -f tests/layers.awk FILES
BEGIN {
    n = split("base config engine adapter out study cli mpi wasm", L, " ")
    for (i = 1; i <= n; i++) level[L[i]] = i
}
function layer(path,   p) {
    if (path ~ /^models\//) return "models"
    split(path, p, "/")
    return p[1] == "sim" ? p[2] : ""
}
/^#include "/ {
    inc = $2; gsub(/"/, "", inc)
    if (inc !~ /^(sim|models)\//) next       # tests' local headers, etc.
    from = layer(FILENAME); to = layer(inc)
    if (FILENAME ":" inc == EXCEPT) ok = 1
    else if (from == "models") ok = to == "models" || to == "base"
    else if (to == "models") ok = from == "adapter"
    else if (!(from in level) || !(to in level)) ok = 0
    else ok = level[to] <= level[from]
    if (!ok) printf "%s:%d: %s (layer %s) may not include %s (layer %s)\n",
                    FILENAME, FNR, FILENAME, from, inc, to
}
