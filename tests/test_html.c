/*
 * test_html.c -- the report page's writers: escaping (entities, UTF-8,
 * control characters), numbers and bytes, inline SVG (prolog dropped,
 * ids prefixed, scripts refused) and the tables of a scenario.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "sim/base/msg.h"
#include "sim/study/html.h"

/* What fn wrote, as a malloc'ed string. */
typedef struct {
    char *text;
    size_t len;
    FILE *f;
} capture;

static FILE *cap_open(capture *c) {
    c->text = NULL;
    c->len = 0;
    c->f = open_memstream(&c->text, &c->len);
    ck_assert_ptr_nonnull(c->f);
    return c->f;
}

static char *cap_close(capture *c) {
    ck_assert_int_eq(fclose(c->f), 0);
    return c->text;
}

static char *escaped(const char *s) {
    capture c;
    html_escape(cap_open(&c), s);
    return cap_close(&c);
}

static void escape_is(const char *in, const char *want) {
    char *got = escaped(in);
    ck_assert_str_eq(got, want);
    free(got);
}

START_TEST(escape_entities) {
    escape_is("a<b>&\"c\" 'd'", "a&lt;b&gt;&amp;&quot;c&quot; &#39;d&#39;");
    escape_is("</script><script>alert(1)</script>",
              "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
    escape_is("&amp;", "&amp;amp;");
    escape_is("", "");
    escape_is(NULL, "");
}
END_TEST

START_TEST(escape_utf8) {
    /* valid sequences of 2, 3 and 4 bytes pass */
    escape_is("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e",
              "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e");
    escape_is("\xe2\x89\xa5", "\xe2\x89\xa5");
    /* invalid: a lone continuation, an overlong, a truncated sequence, a
     * surrogate, above U+10FFFF, 0xff */
    escape_is("a\x80z", "a&#xFFFD;z");
    escape_is("\xc0\xaf", "&#xFFFD;&#xFFFD;");
    escape_is("\xe2\x82", "&#xFFFD;&#xFFFD;");
    escape_is("\xed\xa0\x80", "&#xFFFD;&#xFFFD;&#xFFFD;");
    escape_is("\xf4\x90\x80\x80", "&#xFFFD;&#xFFFD;&#xFFFD;&#xFFFD;");
    escape_is("\xff", "&#xFFFD;");
    escape_is("\xe0\x80\x80", "&#xFFFD;&#xFFFD;&#xFFFD;");
}
END_TEST

START_TEST(escape_controls) {
    escape_is("a\tb\nc\rd", "a\tb\nc\rd");
    escape_is("a\x01"
              "b\x1b"
              "c\x7f",
              "a&#xFFFD;b&#xFFFD;c&#xFFFD;");
    escape_is("\xc2\x85x", "&#xFFFD;x"); /* C1 NEL */
    escape_is("\xc2\xa0x", "\xc2\xa0x"); /* U+00A0 is text */
}
END_TEST

START_TEST(numbers) {
    char b[HTML_NUM_MAX];
    ck_assert_str_eq(html_number(1e9, b), "1e9");
    ck_assert_str_eq(html_number(1e10, b), "1e10");
    ck_assert_str_eq(html_number(2.5e-05, b), "2.5e-5");
    ck_assert_str_eq(html_number(0.1, b), "0.1");
    ck_assert_str_eq(html_number(24, b), "24");
    ck_assert_str_eq(html_number(1234567, b), "1.235e6");
    ck_assert_str_eq(html_number(INFINITY, b), "unbounded");
    ck_assert_str_eq(html_bytes_text(812, b), "812 B");
    ck_assert_str_eq(html_bytes_text(0, b), "0 B");
    ck_assert_str_eq(html_bytes_text(4e12, b), "4.00 TB");
    ck_assert_str_eq(html_bytes_text(1e10, b), "10.0 GB");
    ck_assert_str_eq(html_bytes_text(6000001248.0, b), "6.00 GB");
    ck_assert_str_eq(html_bytes_text(250e6, b), "250 MB");
    ck_assert_str_eq(html_bytes_text(999.6, b), "1.00 kB");
}
END_TEST

START_TEST(svg_inline) {
    const char *doc =
        "<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n"
        "<svg width=\"10\" id=\"c\">\n<defs><path id='gpPt0' d='M0'/>\n"
        "<use xlink:href='#gpPt0' id='gpPt1' fill='#ff0000'/></defs>\n"
        "<g filter='url(#textbox)' stroke=\"#00ff00\">"
        "<use href=\"#gpPt1\"/></g></svg>\n\n";
    char *out, err[256];
    ck_assert_int_eq(html_svg_inline(doc, "s1-cu-", &out, err, sizeof err), 0);
    ck_assert_str_eq(
        out, "<svg width=\"10\" id=\"s1-cu-c\">\n<defs><path id='s1-cu-gpPt0' "
             "d='M0'/>\n<use xlink:href='#s1-cu-gpPt0' id='s1-cu-gpPt1' "
             "fill='#ff0000'/></defs>\n<g filter='url(#s1-cu-textbox)' "
             "stroke=\"#00ff00\"><use href=\"#s1-cu-gpPt1\"/></g></svg>");
    free(out);
    ck_assert_int_eq(html_svg_inline("no figure", "p", &out, err, sizeof err),
                     MSG_EFAIL);
    ck_assert_ptr_null(out);
    ck_assert_ptr_nonnull(strstr(err, "<svg>"));
    ck_assert_int_eq(html_svg_inline("<svg><SCRIPT>x</SCRIPT></svg>", "p", &out,
                                     err, sizeof err),
                     MSG_EFAIL);
    ck_assert_ptr_null(out);
    ck_assert_ptr_nonnull(strstr(err, "script"));
}
END_TEST

START_TEST(page_frame) {
    capture c;
    FILE *f = cap_open(&c);
    html_begin(f, "r<&>");
    html_figure(f, "<svg></svg>", "cap & \"tion\"");
    html_end(f);
    char *t = cap_close(&c);
    ck_assert_ptr_eq(strstr(t, "<!DOCTYPE html>"), t);
    ck_assert_ptr_nonnull(strstr(t, "<meta charset=\"utf-8\">"));
    ck_assert_ptr_nonnull(strstr(t, "<title>r&lt;&amp;&gt;</title>"));
    ck_assert_ptr_nonnull(strstr(t, "<style>"));
    ck_assert_ptr_nonnull(strstr(t, "<figure>\n<svg></svg>\n<figcaption>cap "
                                    "&amp; &quot;tion&quot;</figcaption>"));
    ck_assert_ptr_null(strstr(t, "<script"));
    ck_assert_ptr_null(strstr(t, "http")); /* nothing to fetch */
    ck_assert_int_eq(strcmp(t + strlen(t) - 16, "</body>\n</html>\n"), 0);
    free(t);
}
END_TEST

START_TEST(assumptions_merge_equal_rows) {
    scn_config cfg[2];
    scn_defaults(&cfg[0]);
    scn_defaults(&cfg[1]);
    cfg[1].sched.method = SCHED_DP;
    cfg[1].latency_ms[0] = cfg[1].latency_ms[1] = 30;
    cfg[0].sched.tau = 1; /* per worker: 1 and 3 */
    cfg[0].tau_extra[1] = 2;
    const char *names[] = {"stream<ing>", "dp"};
    capture c;
    html_assumptions(cap_open(&c), 2, names, cfg, NULL);
    char *t = cap_close(&c);
    ck_assert_ptr_nonnull(strstr(t, "<th>stream&lt;ing&gt;</th><th>dp</th>"));
    /* equal for both: one cell across them */
    ck_assert_ptr_nonnull(strstr(t, "<th>parameters</th><td colspan=\"2\">1e9"
                                    "</td>"));
    ck_assert_ptr_nonnull(strstr(t, "<th>layers</th><td colspan=\"2\">24"));
    /* different: one cell each; DP's schedule as the run normalises it */
    ck_assert_ptr_nonnull(strstr(t, "<th>method</th><td>Streaming DiLoCo "
                                    "(streaming)</td><td>data-parallel (dp)"
                                    "</td>"));
    ck_assert_ptr_nonnull(strstr(t, "<td>100</td><td>1</td>")); /* H */
    ck_assert_ptr_nonnull(strstr(t, "<th>overlap</th><td>inner, tau 1, 3 "
                                    "steps (per worker)</td><td>inner, tau 0 "
                                    "steps</td>"));
    ck_assert_ptr_nonnull(strstr(t, "<th>one-way latency, ms</th><td>0</td>"
                                    "<td>30</td>"));
    ck_assert_ptr_nonnull(strstr(t, "<tr class=\"group\"><th colspan=\"3\">"
                                    "Network</th></tr>"));
    free(t);
}
END_TEST

/* The row of `label` in t, up to its end (a static copy). */
static const char *row_of(const char *t, const char *label) {
    static char row[4096];
    char th[256];
    snprintf(th, sizeof th, "<th>%s</th>", label);
    const char *p = strstr(t, th), *e = p ? strstr(p, "</tr>") : NULL;
    if (!p || !e || (size_t)(e - p) >= sizeof row) return "";
    memcpy(row, p, (size_t)(e - p));
    row[e - p] = 0;
    return row;
}

/* Each row of t labelled want[k][0] holds the cells want[k][1]; rows
 * labelled absent[] are not there. */
static void rows_are(const char *t, const char *const (*want)[2], int n,
                     const char *const *absent, int nabsent) {
    for (int k = 0; k < n; k++) {
        char th[256];
        snprintf(th, sizeof th, "<th>%s</th>%s", want[k][0], want[k][1]);
        ck_assert_str_eq(row_of(t, want[k][0]), th);
    }
    for (int k = 0; k < nabsent; k++) ck_assert_ptr_null(strstr(t, absent[k]));
}

/* The network the run uses: the latency matrix (not the unused
 * latency_ms), completion, transport with TCP's window and restart,
 * efficiency, step overhead, the ring order when set; a matrix of more
 * than 8 workers by its least and largest value; DP's buckets and the
 * offload only when a variant has them. */
START_TEST(assumptions_show_the_network_used) {
    scn_config cfg[2];
    for (int i = 0; i < 2; i++) {
        scn_defaults(&cfg[i]);
        cfg[i].workers = 3;
    }
    scn_config *c = &cfg[0];
    const double lat[9] = {0, 10, 50, 10, 0, 50, 50, 50, 0};
    c->has_latency_matrix = 1;
    memcpy(c->latency_matrix_ms, lat, sizeof lat);
    c->completion = SCN_COMPLETION_MEMBER;
    c->transport = SCN_TRANSPORT_TCP;
    c->tcp_init_window_kb = 14.48;
    c->tcp_slow_start_after_idle = 1;
    c->efficiency = 0.95;
    c->collective_overhead_ms = 2.5;
    c->has_ring_order = 1;
    c->ring_order[0] = 2;
    c->ring_order[1] = 0;
    c->ring_order[2] = 1;
    cfg[1].latency_ms[0] = 4; /* per worker: 4, 0, 0 */
    const char *names[] = {"far", "plain"};
    static const char *const first[][2] = {
        {"one-way latency, ms",
         "<td>per pair, from row to column: 0, 10, 50; "
         "10, 0, 50; 50, 50, 0</td><td>4, 0, 0 (per worker; between two, their "
         "mean)</td>"},
        {"a worker passes an all-reduce",
         "<td>member: once it has its own "
         "result</td><td>group: once the whole all-reduce is over</td>"},
        {"transport",
         "<td>tcp: slow start from 14.48 kB, restart after "
         "idle</td><td>ideal: a flow gets its share from its first byte</td>"},
        {"payload share of the line rate", "<td>0.95</td><td>1</td>"},
        {"overhead per collective step", "<td>2.5 ms</td><td>none</td>"},
        {"ring order (star: hub first)",
         "<td>2, 0, 1</td><td>by worker id</td>"}};
    static const char *const dp_offload[] = {"outer parameters and momentum"};
    capture k;
    html_assumptions(cap_open(&k), 2, names, cfg, NULL);
    char *t = cap_close(&k);
    rows_are(t, first, 6, dp_offload, 1);
    free(t);

    /* 10 workers: the matrix's range; restart off; DP buckets, offload */
    for (int i = 0; i < 2; i++) {
        scn_defaults(&cfg[i]);
        cfg[i].workers = 10;
        cfg[i].has_latency_matrix = 1;
        for (int a = 0; a < 10; a++)
            for (int b = 0; b < 10; b++)
                cfg[i].latency_matrix_ms[a * 10 + b] = a == b ? 0 : 3 + a + b;
    }
    cfg[0].transport = SCN_TRANSPORT_TCP;
    cfg[0].tcp_slow_start_after_idle = 0;
    cfg[0].tcp_init_window_kb = 64;
    cfg[0].sched.method = SCHED_DP;
    cfg[0].dp_bucket_mb = 25;
    cfg[1].offload_outer = 1;
    cfg[1].host_gbps = 256;
    static const char *const second[][2] = {
        {"one-way latency, ms", "<td colspan=\"2\">per pair (a 10 x 10 "
                                "matrix): 4 to 20 between two workers</td>"},
        {"transport",
         "<td>tcp: slow start from 64 kB, no restart after "
         "idle</td><td>ideal: a flow gets its share from its first byte</td>"},
        {"all-reduce buckets", "<td>at least 25 MB of payload each</td>"
                               "<td>at least 25 MB of payload each (per "
                               "fragment)</td>"},
        {"outer parameters and momentum",
         "<td>on the accelerator</td><td>in "
         "host memory, copied at 256 Gbit/s</td>"}};
    static const char *const no_order[] = {"ring order"};
    html_assumptions(cap_open(&k), 2, names, cfg, NULL);
    t = cap_close(&k);
    rows_are(t, second, 4, no_order, 1);
    free(t);
}
END_TEST

START_TEST(assumptions_show_traces_and_checkpoint_costs) {
    scn_config cfg[3];
    for (int i = 0; i < 3; i++) scn_defaults(&cfg[i]);
    cfg[0].bw_diurnal = 1;
    cfg[0].diurnal = (bwt_diurnal){.low_gbps = 1,
                                   .high_gbps = 10,
                                   .period_h = 24,
                                   .phase_h = 14,
                                   .steps = 48};
    cfg[0].sched.method = SCHED_DILOCO;
    cfg[0].checkpoint_every_steps = 100;
    cfg[0].checkpoint_s = 2.5;
    cfg[0].restart_s = 30;
    snprintf(cfg[1].bw_trace_path, sizeof cfg[1].bw_trace_path, "wan.txt");
    cfg[1].sched.method = SCHED_DP;
    cfg[1].checkpoint_steps = 500; /* DP's interval, free */
    cfg[1].restart_s = 5;
    const char *names[] = {"night", "traced", "plain"};
    static const char *const rows[][2] = {
        {"bandwidth over time",
         "<td>diurnal: every link from 1 to 10 Gbit/s, period 24 h, high at "
         "14 h, 48 steps a period</td><td>steps replayed from wan.txt</td>"
         "<td>constant</td>"},
        {"checkpoint and restart costs",
         "<td>a checkpoint every 100 steps stops compute 2.5 s; a restart "
         "takes 30 s</td><td>a checkpoint every 500 steps, free; a restart "
         "takes 5 s</td><td>no checkpoints; a restart takes 0 s</td>"}};
    capture k;
    html_assumptions(cap_open(&k), 3, names, cfg, NULL);
    char *t = cap_close(&k);
    rows_are(t, rows, 2, NULL, 0);
    free(t);

    /* neither row where no scenario has a trace or a cost */
    static const char *const hidden[] = {"bandwidth over time",
                                         "checkpoint and restart costs"};
    html_assumptions(cap_open(&k), 1, names + 2, cfg + 2, NULL);
    t = cap_close(&k);
    rows_are(t, NULL, 0, hidden, 2);
    free(t);
}
END_TEST

START_TEST(thresholds_table) {
    double grid[] = {1, 10, 100}, cu[] = {0.2, 0.9, 0.8};
    table_block b = {.npoints = 3, .cu = cu, .dip = 2, .nrows = 3};
    snprintf(b.name, sizeof b.name, "a&b");
    b.row[0] = (table_row){
        0.5,
        1,
        10,
        {.status = TABLE_FOUND, .method = TABLE_BRENT, .v = 4.5678, .cu = 0.5}};
    b.row[1] = (table_row){0.1, 0, 1, {.status = TABLE_AT_START}};
    b.row[2] = (table_row){0.95, -1, NAN, {.status = TABLE_NOT_REACHED}};
    table_result r = {1, &b};
    capture c;
    html_thresholds(cap_open(&c), &r, grid, 3, 0, NULL, NULL);
    char *t = cap_close(&c);
    ck_assert_ptr_nonnull(strstr(t, "<th>CU \xe2\x89\xa5 0.5</th>"));
    ck_assert_ptr_nonnull(strstr(t, "<th>a&amp;b</th>"));
    ck_assert_ptr_nonnull(strstr(t, "10.0<br><small>exact 4.568 (brent)"));
    ck_assert_ptr_nonnull(strstr(t, "1.0<br><small>&lt;= 1</small>"));
    ck_assert_ptr_nonnull(strstr(t, "-<br><small>&gt; 100</small>"));
    ck_assert_ptr_nonnull(strstr(t, "not monotone"));
    free(t);
}
END_TEST

START_TEST(bytes_table) {
    run_result r[2];
    memset(r, 0, sizeof r);
    r[0] = (run_result){.workers = 2,
                        .finished = 1,
                        .wall_time_s = 100,
                        .compute_utilization = 1,
                        .bytes_sent_total = 4000,
                        .syncs = 80};
    r[1] = (run_result){.workers = 2,
                        .finished = 0,
                        .wall_time_s = 1.5,
                        .compute_utilization = 0.25,
                        .bytes_sent_total = 1000000,
                        .syncs = 3};
    const char *names[] = {"x", "y"};
    capture c;
    html_bytes(cap_open(&c), 2, names, r);
    char *t = cap_close(&c);
    ck_assert_ptr_nonnull(strstr(t, "<th>x</th><td class=\"num\">80</td>"
                                    "<td class=\"num\">4.00 kB<br><small>4000 "
                                    "bytes</small></td><td class=\"num\">"
                                    "2.00 kB</td><td class=\"num\">1 x</td>"));
    ck_assert_ptr_nonnull(strstr(t, "250 x"));
    ck_assert_ptr_nonnull(strstr(t, "1.5 s (not finished)"));
    ck_assert_ptr_nonnull(strstr(t, "0.2500"));
    free(t);
}
END_TEST

START_TEST(plan_table) {
    plan_result *p = calloc(1, sizeof *p);
    p->target_cu = 0.95;
    p->nmethods = 2;
    snprintf(p->method[0].name, SCN_NAME_MAX, "<dp>");
    p->method[0].least.status = TABLE_NOT_REACHED;
    snprintf(p->method[1].name, SCN_NAME_MAX, "streaming");
    p->method[1].least =
        (table_crossing){.status = TABLE_FOUND, .v_hi = 1.834, .cu_hi = 0.95};
    p->method[1].latency =
        (table_crossing){.status = TABLE_FOUND, .v_hi = 40.82};
    p->method[1].latency_gbps = 1.926;
    p->has_cost = 1;
    p->cost = (plan_cost){.wan_usd_per_gbps_month = 350,
                          .accelerator_usd_per_hour = 2,
                          .accelerators = 2048};
    p->method[1].noptions = 1;
    p->method[1].option[0] = (plan_option){.gbps = 1.834,
                                           .cu = 0.95,
                                           .wan_usd = 1284,
                                           .idle_usd = 149504,
                                           .total_usd = 150788,
                                           .work_usd = 3152788,
                                           .is_least = 1,
                                           .cheapest_method = 1,
                                           .cheapest_overall = 1};
    p->best_method = 1;
    p->best_option = 0;
    capture c;
    html_plan(cap_open(&c), p);
    char *t = cap_close(&c);
    ck_assert_ptr_nonnull(strstr(t,
                                 "<th>&lt;dp&gt;</th><td class=\"num\">"
                                 "&gt; 100000</td><td class=\"num\">-</td>"));
    ck_assert_ptr_nonnull(strstr(t, "<td class=\"num\">1.834</td><td class="
                                    "\"num\">0.9500</td><td class=\"num\">"
                                    "40.82</td><td class=\"num\">1.926</td>"));
    ck_assert_ptr_nonnull(strstr(t, "<td>least, cheapest overall</td>"));
    ck_assert_ptr_nonnull(strstr(t, "per Gbit/s per worker link;"));
    ck_assert_ptr_null(strstr(t, "egress"));
    ck_assert_ptr_nonnull(strstr(t, "Cheapest that meets the target: "
                                    "streaming at 1.834 Gbit/s per worker "
                                    "link, USD 3,152,788 per month of work."));
    /* every amount with thousands separators, the whole bill beside */
    ck_assert_ptr_nonnull(strstr(t, "<td class=\"num\">1,284</td>"));
    ck_assert_ptr_nonnull(strstr(t, "<td class=\"num\">149,504</td>"));
    free(t);
    /* link pricing and an egress price: the note says so, a column more */
    p->cost.pricing = PLAN_PRICING_LINK;
    p->cost.has_egress = 1;
    p->cost.egress_usd_per_gb = 0.02;
    p->method[1].option[0].egress_usd = 12;
    p->method[1].option[0].total_usd = 150800;
    p->method[1].option[0].bill_usd = 3100000;
    html_plan(cap_open(&c), p);
    t = cap_close(&c);
    ck_assert_ptr_nonnull(strstr(t, "per Gbit/s per link between two sites"));
    ck_assert_ptr_nonnull(
        strstr(t, "egress 0.02 USD per GB (1e9 bytes) sent."));
    ck_assert_ptr_nonnull(strstr(t, "<th>egress</th>"));
    ck_assert_ptr_nonnull(strstr(t,
                                 "<td class=\"num\">12</td><td class=\"num\">"
                                 "3,100,000</td>"));
    free(t);
    free(p);
}
END_TEST

/* The summary box: the recommendation's sentence first, the margins and
 * the load at the option, and what the coupled runs say about quality
 * (their numbers, at equal steps and at equal simulated time), or that
 * it is not assessed. */
START_TEST(summary_box) {
    plan_result *p = calloc(1, sizeof *p);
    p->target_cu = 0.9;
    p->nmethods = 1;
    p->has_cost = 1;
    p->cost = (plan_cost){.accelerator_usd_per_hour = 2, .accelerators = 8};
    snprintf(p->cost.currency, sizeof p->cost.currency, "EUR");
    plan_method *m = &p->method[0];
    snprintf(m->name, SCN_NAME_MAX, "dp");
    snprintf(m->label, PLAN_LABEL_MAX, "Data-parallel");
    m->links = 2;
    m->least = (table_crossing){.status = TABLE_FOUND, .v_hi = 4.2};
    m->noptions = 1;
    m->option[0] = (plan_option){.gbps = 10,
                                 .cu = 0.961,
                                 .wan_usd = 7000,
                                 .bill_usd = 1234567,
                                 .work_usd = 1284669,
                                 .listed = 1};
    p->rec = (plan_rec){.status = PLAN_REC_BUY,
                        .method = 0,
                        .option = 0,
                        .runner_method = -1,
                        .runner_option = -1,
                        .has_at = {1, 1, 1, 0}};
    p->rec.at[PLAN_AT_BASE] =
        (plan_run){.cu = 0.961, .avg_link_gbps = 2.5, .peak_link_gbps = 10};
    p->rec.at[PLAN_AT_LATENCY].cu = 0.95;
    p->rec.at[PLAN_AT_EFFICIENCY].cu = 0.88;
    cpl_summary t[2];
    memset(t, 0, sizeof t);
    t[0].last = (cpl_row){.step = 60, .eval_loss = 2.25};
    t[1].last = (cpl_row){.step = 60, .eval_loss = 1.98};
    const char *labels[] = {"A <1>", "B"};
    double at_time[] = {2.4, 1.98};
    html_summary_part part = {"x.json", p, 2, labels, t, 6.5, at_time};
    capture c;
    html_summary(cap_open(&c), 1, &part);
    char *h = cap_close(&c);
    ck_assert_ptr_nonnull(strstr(h, "<section id=\"summary\">"));
    ck_assert_ptr_nonnull(
        strstr(h, "<p class=\"buy\">Buy 10 Gbit/s per worker link (EUR "
                  "3,500/month per link): Data-parallel reaches CU 0.9610 "
                  "&gt;= 0.9 (the least that meets the target: 4.2 "
                  "Gbit/s); total EUR 1,234,567/month"));
    ck_assert_ptr_nonnull(strstr(h, "<li>margin to the target at 10 Gbit/s: "
                                    "every latency x2 CU 0.9500 (+0.0500); "
                                    "efficiency 0.6 CU 0.8800 (-0.0200)"));
    ck_assert_ptr_nonnull(strstr(h, "average 2.5 Gbit/s (25%), peak 10 "
                                    "Gbit/s (100%)"));
    ck_assert_ptr_nonnull(strstr(h, "at equal steps (60): A &lt;1&gt; 2.2500; "
                                    "B 1.9800. At equal simulated time "
                                    "(6.5 s, the shortest run&#39;s end): A "
                                    "&lt;1&gt; 2.4000; B 1.9800."));
    ck_assert_ptr_nonnull(strstr(h, "not of the planned model"));
    free(h);
    part.ntrain = 0;
    html_summary(cap_open(&c), 1, &part);
    h = cap_close(&c);
    ck_assert_ptr_nonnull(strstr(h, "<li>Quality: not assessed"));
    free(h);
    free(p);
}
END_TEST

START_TEST(train_table) {
    cpl_summary s[2];
    memset(s, 0, sizeof s);
    s[0].last = (cpl_row){.step = 60,
                          .eval_loss = 1.63271,
                          .train_loss = 1.6578,
                          .sim_time_s = 6.44306,
                          .sim_utilization = 0.93,
                          .wan_bytes = 6000001248};
    s[0].sim.finished = 1;
    s[0].target_loss = NAN;
    s[1] = s[0];
    s[1].target_loss = 1.7;
    s[1].target_step = 40;
    s[1].target_time_s = 4.25;
    const char *names[] = {"a", "b"};
    capture c;
    html_train(cap_open(&c), 2, names, s);
    char *t = cap_close(&c);
    ck_assert_ptr_nonnull(strstr(t, "<th>a</th><td class=\"num\">60</td><td "
                                    "class=\"num\">1.6327</td>"));
    ck_assert_ptr_nonnull(strstr(t, "6.00 GB"));
    ck_assert_ptr_nonnull(strstr(t, "<td>1.7 at step 40, 4.25 s</td>"));
    free(t);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("html");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, escape_entities);
    tcase_add_test(tc, escape_utf8);
    tcase_add_test(tc, escape_controls);
    tcase_add_test(tc, numbers);
    tcase_add_test(tc, svg_inline);
    tcase_add_test(tc, page_frame);
    tcase_add_test(tc, assumptions_merge_equal_rows);
    tcase_add_test(tc, assumptions_show_the_network_used);
    tcase_add_test(tc, assumptions_show_traces_and_checkpoint_costs);
    tcase_add_test(tc, thresholds_table);
    tcase_add_test(tc, bytes_table);
    tcase_add_test(tc, plan_table);
    tcase_add_test(tc, summary_box);
    tcase_add_test(tc, train_table);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
