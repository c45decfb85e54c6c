# palette.gp -- what every figure shares: one colour per method, the
# point and dash types that tell several lines of one method apart, and
# field(), one value of a `dilosim run` result (the resolved inputs that a
# figure's title names).  Loaded by every gnuplot script of plots/ and
# scenarios/experiments/ (from the script's own directory, via ARG0); the
# HTML report of `dilosim report` uses the same colours (sim/gnuplot.c,
# gnuplot_method_color), and tests/cli_plots.sh checks that they agree.
#
# The method keys, and the colours (Okabe and Ito's set, told apart with
# the common colour-vision deficiencies; black stays for reference lines):
#   dp                     data-parallel                  vermillion
#   diloco                 DiLoCo                         blue
#   streaming              Streaming DiLoCo, tau 0        bluish green
#   streaming_overlap      Streaming DiLoCo, tau >= 1     reddish purple
#   streaming_overlap_fp4  the same with 4-bit payloads   orange
#   outer                  outer-step overlap (delayed)   wine
#   eager                  outer-step overlap, eager      sky blue
#   fedpart                FedPart                        grey
#   sparta                 SPARTA, random subsets         indigo
#
#   method_color(k)        "#rrggbb" of key k; a k that starts with "#"
#                          is returned as it is, any other k as ""
#   method_known(k)        1 when method_color(k) is a colour
#   method_shade(k, i, n)  the i-th of n shades of k's colour, from darker
#                          (i = 1) to lighter (i = n); n = 1: the colour
#   series_pt(i), series_ps(i), series_dt(i)  point type, point size and
#                          dash type of the i-th line of one method (cycled)
#   field(f, k)            the value of key k ("k": value, one per line)
#                          in the JSON file f, quotes removed; "" if absent
#   bandwidth_label(f)     the bandwidth axis' label, in the unit of Gbit
#                          of the run result f (its "gbit" field)

palette_keys = "dp diloco streaming streaming_overlap streaming_overlap_fp4 outer eager fedpart sparta"
array palette_rgb[9] = [0xD55E00, 0x0072B2, 0x009E73, 0xCC79A7, 0xE69F00, \
                        0x882255, 0x56B4E9, 0x999999, 0x332288]

palette_index(k, i) = i > words(palette_keys) ? 0 : \
  (word(palette_keys, i) eq k ? i : palette_index(k, i + 1))
method_known(k) = k[1:1] eq "#" || palette_index(k, 1) > 0
method_color(k) = k[1:1] eq "#" ? k : \
  (palette_index(k, 1) > 0 ? sprintf("#%06x", palette_rgb[palette_index(k, 1)]) : "")

# One channel of c moved by t: toward black (t < 0) or white (t > 0).
palette_mix(v, t) = int(t < 0 ? v * (1 + t) : v + (255 - v) * t + 0.5)
palette_rgb_of(c, t) = palette_mix((c >> 16) & 255, t) * 65536 + \
  palette_mix((c >> 8) & 255, t) * 256 + palette_mix(c & 255, t)
method_shade(k, i, n) = n < 2 ? method_color(k) : \
  sprintf("#%06x", palette_rgb_of(palette_rgb[palette_index(k, 1)], \
                                  -0.65 + 1.0 * (i - 1) / (n - 1.0)))

# Filled points (circle, square, triangle, diamond) small, open ones
# (circle, square, triangle) large: a line under another stays visible.
palette_pt = "7 5 9 13 6 4 8"
palette_ps = "0.6 0.6 0.7 0.8 1.5 1.4 1.5"
palette_dt = "1 2 4 5 3 1 2"
series_pt(i) = int(word(palette_pt, (i - 1) % words(palette_pt) + 1))
series_ps(i) = real(word(palette_ps, (i - 1) % words(palette_ps) + 1))
series_dt(i) = int(word(palette_dt, (i - 1) % words(palette_dt) + 1))

field(f, k) = system(sprintf("sed -n 's/^ *\"%s\": *\"\\{0,1\\}\\([^\",]*\\)\"\\{0,1\\},\\{0,1\\}$/\\1/p' '%s'", k, f))
bandwidth_label(f) = sprintf("bandwidth between datacenters (Gbit/s, " . \
  "1 Gbit = %s bit; log scale)", field(f, "gbit") eq "binary" ? "2^{30}" : "10^{9}")
