# limits.awk -- the size limits of production code: no file over MAXFILE
# lines, no function over MAXFN lines (from the first line of its
# signature to its closing brace, the tree's K&R layout: a function body
# opens at the end of its signature and closes with a "}" in column 0).
# usage: awk -v MAXFILE=900 -v MAXFN=80 -f tests/limits.awk FILES
FNR == 1 { cand = 0; infn = 0 }
!infn && /^[A-Za-z_].*\(/ && !/;[ \t]*$/ && !/^(typedef|enum|struct [A-Za-z_]+ *\{)/ {
    if (!cand) { start = FNR; name = $0 }
    cand = 1
}
cand && !infn && /\{[ \t]*$/ { infn = 1; cand = 0 }
cand && !infn && /;[ \t]*$/ { cand = 0 }
infn && /^\}/ {
    len = FNR - start + 1; infn = 0
    if (len > MAXFN) {
        sub(/\(.*/, "", name); k = split(name, w, /[ *]+/)
        printf "%s:%d: function %s has %d lines (at most %d)\n",
               FILENAME, start, w[k], len, MAXFN
    }
}
{ lines[FILENAME] = FNR }
END {
    for (f in lines) if (lines[f] > MAXFILE)
        printf "%s: %d lines (at most %d)\n", f, lines[f], MAXFILE
}
