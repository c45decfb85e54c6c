#!/bin/sh
# cli_plan.sh -- command-line tests of what `dilosim plan` says beyond the
# least bandwidth (tests/cli_table.sh has those): the whole text of a
# small plan against tests/data/plan/one_layer_dp.txt (assumptions,
# binding limits, memory, a whole training), the new options' usage
# errors, the cost file's pricing and egress keys, --sensitivity, how
# sure the plan is (--set-from with a fit block, --samples, --seed,
# --seeds), the JSON of it all, and the run JSON's memory_per_worker.
# Run by tests/cli.sh.
# usage: tests/cli_plan.sh [path/to/dilosim]
bin=${1:-bin/dilosim}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/tests/cli_lib.sh"

sc=$root/tests/data/table/one_layer_dp.json
cost=$root/tests/data/table/cost.json
want=$root/tests/data/plan/one_layer_dp.txt

# help
expect 0 "plan help" -- "$bin" plan --help
for w in --sensitivity --mtbf-hours --train-hours --tokens pricing egress_usd_per_gb; do
  contains "$tmp/out" "$w" "plan help lists $w"
done

# The whole text, every block: the summary first (what to buy, the
# runner-up, the margins, the links' load, the training), the methods and
# costs, limits, memory and the training, the assumptions last.  Written from
# the working directory so that the title names the file as given.
expect 0 "plan text" -- sh -c 'cd "$1" && "$2" plan tests/data/table/one_layer_dp.json \
  --target-cu 0.95 --cost tests/data/table/cost.json --train-hours 0.01' sh "$root" "$bin"
same "$tmp/out" "$want" "plan text (got $tmp/out, want $want)"
[ -s "$tmp/err" ] && bad "plan wrote to stderr: $(head -1 "$tmp/err")" || ok
sed -n 3p "$tmp/out" | grep -q '^summary:$' && ok || bad "plan text: line 3 is the summary"
sed -n 4p "$tmp/out" | grep -q '^  Buy 10 Gbit/s per worker link (USD 2,000/month per link): Data-parallel,$' \
  && ok || bad "plan text: line 4 is what to buy"
[ "$(grep -n '^assumptions:$' "$tmp/out" | cut -d: -f1)" -gt "$(grep -n '^cheapest training' "$tmp/out" | cut -d: -f1)" ] \
  && ok || bad "plan text: the assumptions come last"

# links: the speeds one can buy, each with its price; the recommendation
# is a listed one, by the total of a month of work; a currency
printf '{"links": [{"gbps": 1, "usd_month": 100}, {"gbps": 5, "usd_month": 900},\n {"gbps": 10, "usd_month": 1000}], "currency": "EUR",\n "accelerator_usd_per_hour": 2.5, "accelerators": 1024}\n' >"$tmp/links.json"
expect 0 "plan links" -- "$bin" plan "$sc" --target-cu 0.95 --cost "$tmp/links.json"
contains "$tmp/out" "^  Buy 10 Gbit/s per worker link (EUR 1,000/month per link): Data-parallel,$" \
  "links: buy a listed speed, its price with the currency"
contains "$tmp/out" "^    3.04 Gbit/s); total EUR 1,870,800/month (EUR 1,900,733 per month of work)$" \
  "links: the least beside it, the total with separators"
contains "$tmp/out" "^  runner-up: Data-parallel, bf16 gradients at 5 Gbit/s, which costs EUR 29,726$" \
  "links: the runner-up and why"
contains "$tmp/out" "^monthly cost, EUR: WAN the listed link's price per worker link;$" "links: header"
contains "$tmp/out" "^dp  *3.04  *0.9500  *-  *1,775,360  *93,440  *-  *-  least$" \
  "links: the least is not for sale (no price)"
contains "$tmp/out" "^  margin to the target at 10 Gbit/s: every latency x2 CU 0.9843 (+0.0343);$" \
  "the margin at the option"
contains "$tmp/out" "^  link load at 10 Gbit/s: average 0.1575 Gbit/s (1.6%), peak 10 Gbit/s (100%)$" \
  "the headroom at the option"
printf '{"links": [{"gbps": 1, "usd_month": 100}, {"gbps": 2, "usd_month": 150}],\n "accelerator_usd_per_hour": 2.5, "accelerators": 1024}\n' >"$tmp/short.json"
expect 0 "plan links, none enough" -- "$bin" plan "$sc" --target-cu 0.95 --cost "$tmp/short.json"
contains "$tmp/out" "^  No listed option is enough: the fastest on the list, 2 Gbit/s per worker$" \
  "links: none sufficient, said plainly"
printf '{"links": [{"gbps": 10, "usd_month": 1}, {"gbps": 10, "usd_month": 2}],\n "accelerator_usd_per_hour": 2.5, "accelerators": 8}\n' >"$tmp/dup.json"
expect 2 "links: a speed twice" -- "$bin" plan "$sc" --target-cu 0.95 --cost "$tmp/dup.json"
contains "$tmp/err" "^$tmp/dup.json:1:51: links\[1\].gbps: must be more than links\[0\].gbps (got 10 after 10: expected the links by increasing speed, each once)$" \
  "links: a speed twice, its message"
lines "$tmp/err" 1 "links: one line"
printf '{"links": [{"gbps": 10, "usd_month": 1, "x": 2}],\n "accelerator_usd_per_hour": 2.5, "accelerators": 8}\n' >"$tmp/unk.json"
expect 2 "links: unknown key" -- "$bin" plan "$sc" --target-cu 0.95 --cost "$tmp/unk.json"
contains "$tmp/err" "^$tmp/unk.json:1:41: links\[0\].x: unknown key (expected one of: gbps, usd_month)$" \
  "links: unknown key, its message"
printf '{"links": [{"gbps": "fast", "usd_month": 1}],\n "accelerator_usd_per_hour": 2.5, "accelerators": 8}\n' >"$tmp/type.json"
expect 2 "links: bad type" -- "$bin" plan "$sc" --target-cu 0.95 --cost "$tmp/type.json"
contains "$tmp/err" "^$tmp/type.json:1:21: links\[0\].gbps: must be a number (expected a number in \[1e-06, 1000000000\])$" "links: bad type, its message"
printf '{"wan_usd_per_gbps_month": 1, "currency": "dollars",\n "accelerator_usd_per_hour": 2.5, "accelerators": 8}\n' >"$tmp/cur.json"
expect 2 "currency" -- "$bin" plan "$sc" --target-cu 0.95 --cost "$tmp/cur.json"
contains "$tmp/err" "^$tmp/cur.json:1:43: currency: must be a 3-letter currency code in capitals" \
  "currency: its message"
expect 0 "plan links json" -- "$bin" plan "$sc" --target-cu 0.95 --cost "$tmp/links.json" --json \
  --out "$tmp/links.out.json"
if command -v python3 >"$tmp/null"; then
  if python3 - "$tmp/links.out.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["cost"]["currency"] == "EUR" and p["cost"]["links"][2] == {"gbps": 10, "usd_month": 1000}
r = p["recommendation"]
assert r["status"] == "buy" and r["method"] == "dp" and r["gbps"] == 10
assert r["label"] == "Data-parallel, bf16 gradients" and r["per_link_usd_month"] == 1000
assert r["runner_up"]["gbps"] == 5 and r["runner_up"]["lost_on"] == "cost"
assert abs(r["at_option"]["efficiency_0.6"]["cu"] - 0.1 / (0.1 + 0.016 / 6)) < 1e-7
assert r["summary"].startswith("Buy 10 Gbit/s per worker link (EUR 1,000/month")
m = p["methods"][0]
assert m["label"] == "Data-parallel, bf16 gradients"
listed = [o for o in m["options"] if o["listed"]]
assert [o["gbps"] for o in listed] == [1, 5, 10]
for o in listed:
    assert abs(o["bill_usd_month"] - (o["wan_usd_month"] + o["busy_usd_month"] + o["idle_usd_month"])) < 1e-6
    assert o["total_usd_month"] == o["wan_usd_month"] + o["idle_usd_month"]
EOF
  then ok; else bad "plan --json: links, the recommendation"; fi
fi

# usage errors: one line, exit 2, no output file
for args in "--mtbf-hours 24" "--sensitivity --mtbf-hours 0" "--sensitivity --mtbf-hours x" \
            "--train-hours -1" "--train-hours 1 --tokens 5" "--tokens 0.5"; do
  expect 2 "plan $args" -- "$bin" plan "$sc" --target-cu 0.9 $args --out "$tmp/u.txt"
  lines "$tmp/err" 1 "plan $args: one line"
  contains "$tmp/err" "^dilosim plan: .*(see 'dilosim plan --help')$" "plan $args: usage"
  absent "$tmp/u.txt" "plan $args"
done
contains "$tmp/err" "--tokens: '0.5' is not a number in \[1, 1e+18\]" "--tokens range"
expect 2 "plan --mtbf-hours alone" -- "$bin" plan "$sc" --target-cu 0.9 --mtbf-hours 24
contains "$tmp/err" "--mtbf-hours is the MTBF of --sensitivity" "--mtbf-hours alone"
expect 2 "plan --tokens without tokens_per_step" -- "$bin" plan "$sc" --target-cu 0.9 \
  --tokens 1e6 --out "$tmp/u.txt"
contains "$tmp/err" "^$sc: dp: --tokens needs model.tokens_per_step" "--tokens message"
lines "$tmp/err" 1 "--tokens message: one line"
absent "$tmp/u.txt" "--tokens without tokens_per_step"
expect 0 "plan --tokens" -- "$bin" plan "$root/tests/data/plan/tokens.json" \
  --target-cu 0.95 --tokens 36001
contains "$tmp/out" "^whole training: 36001 tokens " "--tokens title"
contains "$tmp/out" "^dp  *37  *3.04 " "--tokens steps"

# cost files: pricing and egress
printf '{"wan_usd_per_gbps_month": 200, "accelerator_usd_per_hour": 2.5,\n "accelerators": 8, "pricing": "ring"}\n' >"$tmp/c1.json"
expect 2 "cost pricing" -- "$bin" plan "$sc" --target-cu 0.95 --cost "$tmp/c1.json"
contains "$tmp/err" "^$tmp/c1.json:2:32: pricing: must be \"port\"" "cost pricing message"
printf '{"wan_usd_per_gbps_month": 200, "accelerator_usd_per_hour": 2.5,\n "accelerators": 8, "egress_usd_per_gb": -1}\n' >"$tmp/c2.json"
expect 2 "cost egress" -- "$bin" plan "$sc" --target-cu 0.95 --cost "$tmp/c2.json"
contains "$tmp/err" "^$tmp/c2.json:2:42: egress_usd_per_gb: must be a number >= 0" \
  "cost egress message"
printf '{"wan_usd_per_gbps_month": 200, "accelerator_usd_per_hour": 2.5,\n "accelerators": 1024, "bandwidths_gbps": [1, 10], "pricing": "link",\n "egress_usd_per_gb": 0.01}\n' >"$tmp/c3.json"
expect 0 "cost link, egress" -- "$bin" plan "$sc" --target-cu 0.95 --cost "$tmp/c3.json"
contains "$tmp/out" "^monthly cost, USD: WAN 200 per Gbit/s per link between two sites;$" \
  "link pricing header"
contains "$tmp/out" "^egress 0.01 per GB (1e9 bytes) of the bytes sent per month" "egress header"
# 1 link of 10 Gbit/s: 2000; egress 8e7 B / 2.032 s x 730 h = 1034.6 USD;
# busy 0.9843 x 1,868,800; the total is WAN + busy + idle + egress
contains "$tmp/out" "^dp  *10  *0.9843  *2,000  *1,839,370  *29,430  *1,035  *1,871,835  *1,901,784  cheapest overall, buy$" \
  "link and egress row"
# every row's total is the sum of its parts as printed (each rounded: to 2)
awk '/^dp  / && NF >= 9 && $4 ~ /,|^[0-9]+$/ {
  for (i = 4; i <= 9; i++) gsub(",", "", $i)
  d = $4 + $5 + $6 + $7 - $8; if (d < -2 || d > 2) bad = 1; n++ }
  END { exit !(n == 3 && !bad) }' "$tmp/out" && ok || bad "costs: totals are the sum of their parts"

# --sensitivity (one_layer_dp at 20 ms: 0.2667 Gbit/s, at 40 ms 0.8)
expect 0 "plan --sensitivity" -- "$bin" plan "$sc" --target-cu 0.5 --set network.latency_ms=20 \
  --sensitivity --mtbf-hours 0.0001
contains "$tmp/out" "^sensitivity: the least Gbit/s per worker link with one assumption changed$" \
  "sensitivity title"
contains "$tmp/out" "^method  *base  *latency x2  *efficiency 0.6  *MTBF 0.0001 h$" "sensitivity header"
contains "$tmp/out" "^dp  *0.2667  *0.8  *[0-9.]*  *> 100000$" "sensitivity row"
lacks "$tmp/out" "^note: about" "sensitivity: enough failures"
expect 0 "plan --sensitivity, default MTBF" -- "$bin" plan "$sc" --target-cu 0.5 --sensitivity
contains "$tmp/out" "MTBF 24 h$" "default MTBF"
contains "$tmp/out" "^note: about 4.6e-05 failures expected in the simulated steps at MTBF 24 h, too few to$" \
  "few failures note"
contains "$tmp/out" "^tell (--set steps=4320000 expects 10)\.$" "few failures: the steps"

# JSON: every new field parses
expect 0 "plan json, all" -- "$bin" plan "$root/tests/data/table/variants.json" --target-cu 0.9 \
  --cost "$tmp/c3.json" --sensitivity --train-hours 0.01 --json --out "$tmp/p.json"
if command -v python3 >"$tmp/null"; then
  if python3 - "$tmp/p.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["cost"]["pricing"] == "link" and p["cost"]["egress_usd_per_gb"] == 0.01
assert p["sensitivity"]["mtbf_hours"] == 24 and p["training_hours"] == 0.01
assert p["cheapest_training"]["name"] in ("fast", "slow")
for m in p["methods"]:
    a = m["assumptions"]
    assert a["transport"] == "ideal" and a["site_links"] == 1 and a["steps"] == 20
    assert m["memory_per_worker"]["accelerator_bytes"] == 12000000
    assert len(m["candidates"]) == len(m["options"]) == 3
    for c, o in zip(m["candidates"], m["options"]):
        assert c["gbps"] == o["gbps"] and c["limit"] == "bandwidth"
        assert c["gain_latency_half"] is None and c["window_covers"] is None
        assert c["training"]["steps"] == (360 if m["name"] == "fast" else 180)
        assert o["total_usd_month"] == o["wan_usd_month"] + o["idle_usd_month"] + o["egress_usd_month"]
    assert m["sensitivity"]["latency_x2"]["least_status"] == "found"
EOF
  then ok; else bad "plan --json fields"; fi
fi

# How sure: --set-from with a fit block gives the interval (efficiency
# 0.8 +- 0.05: the plain answer 3.04 / 0.8 = 3.8), --seeds the spreads
fit=$root/tests/data/plan/fit_efficiency.json
fails=$root/tests/data/plan/failures.json
expect 0 "plan help, how sure" -- "$bin" plan --help
for w in --samples --seed --seeds --set-from; do
  contains "$tmp/out" "^  $w " "plan help lists $w"
done
for args in "--samples 0" "--samples 100001" "--samples x" "--seeds 0" "--seeds 100001" \
            "--seeds 1.5" "--seed -1" "--seed x" "--seed 18446744073709551616"; do
  expect 2 "plan $args" -- "$bin" plan "$sc" --target-cu 0.9 --set-from "$fit" $args \
    --out "$tmp/u.txt"
  lines "$tmp/err" 1 "plan $args: one line"
  contains "$tmp/err" "^dilosim plan: .*(see 'dilosim plan --help')$" "plan $args: usage"
  absent "$tmp/u.txt" "plan $args"
done
contains "$tmp/err" "--seed must be an integer in 0..18446744073709551615" "--seed range"
expect 2 "plan --samples without --set-from" -- "$bin" plan "$sc" --target-cu 0.9 --samples 5
contains "$tmp/err" "--samples and --seed are for the draws of the fitted keys of --set-from FIT.json (give it)" \
  "--samples without a fit"
printf '{"network.efficiency": 0.8}\n' >"$tmp/nofit.json"
expect 2 "plan --seed without a fit block" -- "$bin" plan "$sc" --target-cu 0.9 \
  --set-from "$tmp/nofit.json" --seed 3
contains "$tmp/err" "(its file has no fit block)" "--seed without a fit block"
expect 0 "plan --set-from, no fit block" -- "$bin" plan "$sc" --target-cu 0.95 \
  --set-from "$tmp/nofit.json"
contains "$tmp/out" "^dp  *3.8  *0.9500 " "no fit block: the plain answer at 0.8"
lacks "$tmp/out" "5%, 95%" "no fit block: no interval"

expect 0 "plan --set-from fit" -- "$bin" plan "$sc" --target-cu 0.95 --set-from "$fit" \
  --samples 50 --jobs 1
cp "$tmp/out" "$tmp/fit1.txt"
contains "$tmp/out" "^method  *least Gbit/s  *\[5%, 95%\]  *CU  *latency limit ms  *(at Gbit/s)$" \
  "interval header"
contains "$tmp/out" "^dp  *3.8  *\[3\.[0-9]*, 4\.[0-9]*\]  *0.9500 " "interval row"
contains "$tmp/out" "^\[5%, 95%\]: the 5th and 95th percentiles of the least Gbit/s over 50 draws of$" \
  "interval note"
contains "$tmp/out" "^  network.efficiency$" "interval note: the keys"
contains "$tmp/out" "^own error.$" "interval note: what it covers"
expect 0 "plan --set-from fit, 2 jobs" -- "$bin" plan "$sc" --target-cu 0.95 --set-from "$fit" \
  --samples 50 --jobs 2
same "$tmp/out" "$tmp/fit1.txt" "the interval does not depend on --jobs"
expect 0 "plan --set-from fit, seed 2" -- "$bin" plan "$sc" --target-cu 0.95 --set-from "$fit" \
  --samples 50 --seed 2
if cmp -s "$tmp/out" "$tmp/fit1.txt"; then bad "--seed 2 gives the draws of seed 1"; else ok; fi

expect 0 "plan --seeds, no randomness" -- "$bin" plan "$sc" --target-cu 0.95 --seeds 10
contains "$tmp/out" "^note: --seeds 10: no method draws random failures or stragglers: every$" \
  "--seeds without randomness: the note"
expect 0 "plan --seeds, a trace" -- "$bin" plan "$root/scenarios/examples/failures_trace.json" \
  --target-cu 0.5 --seeds 3 --set steps=300
contains "$tmp/out" "stragglers (a fault trace is fixed): every$" "--seeds with a trace: the note"
expect 0 "plan --seeds" -- "$bin" plan "$fails" --target-cu 0.7 --seeds 9
contains "$tmp/out" "^CU over 9 seeds (the scenario's seed + k, k = 0..8): CU at its own seed, and$" \
  "seeds title"
contains "$tmp/out" "^diloco  *0.1332  *0.7000  *0.6[0-9]*  *0.[0-9]*  *0.[0-9]*  least$" "seeds row"
contains "$tmp/out" "^method  *least Gbit/s  *P5 CU$" "least of P5: header"

# JSON of both
expect 0 "plan json, how sure" -- "$bin" plan "$fails" --target-cu 0.7 --set-from "$fit" \
  --samples 5 --seed 4 --seeds 5 --cost "$root/tests/data/table/cost.json" --json --out "$tmp/s.json"
if command -v python3 >"$tmp/null"; then
  if python3 - "$tmp/s.json" "$fit" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
f = p["fit"]
assert f["file"] == sys.argv[2] and f["keys"] == ["network.efficiency"]
assert f["samples"] == 5 and f["seed"] == 4 and f["redraws"] == 0
assert p["seeds"] == 5
for m in p["methods"]:
    i = m["least_gbps_interval"]
    assert i["samples"] == 5 and i["seed"] == 4 and i["redraws"] == 0
    assert i["mid"] == m["least_gbps"] and float(i["low"]) <= float(i["high"])
    assert i["below_range"] == 0 and i["above_range"] in (0, 1, 2, 3, 4, 5)
    assert m["seeds_random"] is True and m["least_gbps_p5"]["status"] == "found"
    assert m["least_gbps_p5"]["cu_p5"] >= 0.7 and m["least_gbps_p5"]["seeds"] == 5
    for o in m["options"] + m["candidates"]:
        s = o["cu_seeds"]
        assert s["seeds"] == 5 and s["p5"] <= s["p50"] <= s["p95"]
EOF
  then ok; else bad "plan --json: the interval and the seeds"; fi
fi

# run JSON: memory per worker, with and without offloading
expect 0 "run memory" -- "$bin" run "$sc"
contains "$tmp/out" '^  "memory_per_worker": {"parameters_bytes": 2000000, "gradients_bytes": 2000000, "inner_optimizer_bytes": 8000000, "outer_parameters_bytes": 0, "outer_momentum_bytes": 0, "accelerator_bytes": 12000000, "bytes_per_param": 12, "offload_outer": false},$' \
  "run memory_per_worker"
expect 0 "run memory, offload" -- "$bin" run "$root/scenarios/paper/100b.json" \
  --variant streaming_overlap --set method.offload_outer=true --set steps=300
contains "$tmp/out" '"accelerator_bytes": 1222222222224, "bytes_per_param": 12.22222222224, "offload_outer": true, "host_bytes": 800000000000, "fragments_in_flight": 1, "fragment_params": 2777777778}' \
  "run memory_per_worker, offloaded"
# measured: the fragment merged at a step boundary and the next one taken
# there are both on the accelerator while their copies (256 Gbit/s) run
contains "$tmp/out" '"failures": 0, "outer_device_peak_bytes": 44444444440}' \
  "run: the measured peak of an offloaded run"

# A measured network's costs are assumptions the plan states (and only
# when set: the plain plan above names none of them).
expect 0 "measured network" -- "$bin" plan "$root/scenarios/default.json" --target-cu 0.8 \
  --set steps=200 --set network.startup_ms=200 --set network.queue_ms=5 \
  --set network.ack_bytes_per_kb=22.8 --json --out "$tmp/measured.json"
contains "$tmp/measured.json" '"startup_ms": 200, "ack_bytes_per_kb": 22.8, "queue_ms": 5' \
  "the measured network's keys in the JSON assumptions"
expect 0 "measured network text" -- "$bin" plan "$root/scenarios/default.json" --target-cu 0.8 \
  --set steps=200 --set network.startup_ms=200 --set network.queue_ms=5 \
  --set network.ack_bytes_per_kb=22.8
contains "$tmp/out" "200 ms set-up per pair; ACKs of 22.8 bytes per kB; a 5 ms queue" \
  "the measured network's keys in the text assumptions"
expect 0 "plain network" -- "$bin" plan "$root/scenarios/default.json" --target-cu 0.8 \
  --set steps=200 --json
lacks "$tmp/out" "startup_ms" "no set-up named when there is none"

# a link too slow for the target is never the cheapest, however cheap: the
# marks rank as the recommendation does (a month of work, options that
# meet the target)
expect 0 "plan, a cheap slow link" -- "$bin" plan "$root/scenarios/examples/two_sites_10b.json" \
  --variant streaming_overlap_fp4 --target-cu 0.95 \
  --cost "$root/tests/data/plan/cheap_slow_cost.json"
contains "$tmp/out" '^streaming_overlap_fp4 *5 .*cheapest overall, buy$' "the option bought is the cheapest"
lacks "$tmp/out" '^streaming_overlap_fp4 *1 .*cheapest' "the slow link is not marked"
# --grid-gco2-per-kwh: each candidate's energy per month and emissions,
# in the text and the JSON; without workers.power_w one line, exit 2,
# nothing written
pw='workers.power_w={"busy": 500, "idle": 50}'
expect 0 "plan grid" -- "$bin" plan "$sc" --target-cu 0.95 --set "$pw" \
  --grid-gco2-per-kwh 300
contains "$tmp/out" "^emissions at 300 g CO2 per kWh$" "grid: the text's head"
contains "$tmp/out" "^at the recommendation (dp at 3.04 Gbit/s): 697.15 kWh, 209.145 kg CO2 per month$" \
  "grid: at the recommendation (2 x 730 x (0.95 x 500 + 0.05 x 50) / 1000)"
expect 0 "plan grid json" -- "$bin" plan "$sc" --target-cu 0.95 --set "$pw" \
  --grid-gco2-per-kwh 300 --json
contains "$tmp/out" '^  "grid_gco2_per_kwh": 300,$' "grid: the JSON's intensity"
contains "$tmp/out" '^    "energy_kwh_month": 697.15' "grid: the recommendation's energy"
contains "$tmp/out" '^    "emissions_kg_co2_month": 209.145' "grid: the recommendation's emissions"
contains "$tmp/out" '"energy_kwh_month": 697.15[0-9]*, "emissions_kg_co2_month": 209.145' \
  "grid: each candidate's"
contains "$tmp/out" '"accelerators": 2, "power_busy_w": 500, "power_idle_w": 50,' \
  "grid: the method's power"
expect 0 "plan without grid json" -- "$bin" plan "$sc" --target-cu 0.95 --set "$pw" --json
lacks "$tmp/out" "energy_kwh_month" "no grid: no energy in the plan"
rm -f "$tmp/grid.txt"
expect 2 "plan grid without power" -- "$bin" plan "$sc" --target-cu 0.95 \
  --grid-gco2-per-kwh 300 --out "$tmp/grid.txt"
lines "$tmp/err" 1 "grid without power: one line"
contains "$tmp/err" "^$sc: dp: --grid-gco2-per-kwh needs workers.power_w in the scenario (expected {\"busy\": W, \"idle\": W} per accelerator)$" \
  "grid without power: the message"
absent "$tmp/grid.txt" "grid without power: nothing written"
expect 2 "plan grid below 0" -- "$bin" plan "$sc" --target-cu 0.95 --set "$pw" \
  --grid-gco2-per-kwh -1
contains "$tmp/err" "^dilosim plan: --grid-gco2-per-kwh: '-1' is not a number in \[0, 1e+06\]" \
  "grid below 0: the usage error"

finish cli_plan
