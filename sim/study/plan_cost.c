/*
 * plan_cost.c -- the cost file of `dilosim plan --cost` (plan.h:
 * plan_cost_parse, plan_cost_load): prices, accelerators, the bandwidths
 * to price and what a link is, read through the scenario's strict JSON
 * reader.
 */
#include "sim/study/plan.h"
#include "sim/base/msg.h"
#include "sim/config/json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cost file goes through the scenario's strict JSON reader (sim/config/json.h):
 * errors are "file:line:col: key: what is wrong (expected ...)". */
#define COST_MAX_BYTES (64 << 10)
#define COST_MAX 1e15 /* prices and counts */

enum {
    K_WAN,
    K_ACC_PRICE,
    K_ACC,
    K_BANDWIDTHS,
    K_PRICING,
    K_EGRESS,
    K_LINKS,
    K_CURRENCY,
    NKEYS
};
static const char *const cost_key[NKEYS] = {"wan_usd_per_gbps_month",
                                            "accelerator_usd_per_hour",
                                            "accelerators",
                                            "bandwidths_gbps",
                                            "pricing",
                                            "egress_usd_per_gb",
                                            "links",
                                            "currency"};
static const char *const link_key[] = {"gbps", "usd_month"};
static const char *const pricing_name[] = {"port", "link"};

/* The parsed text and where its messages go. */
typedef struct {
    const char *name, *text;
    const json_doc *doc;
    char *err;
    size_t errlen;
} cost_ctx;

/* "name:line:col: path: what", at node at (its key when at_key). */
static int cost_fail(const cost_ctx *c, const cJSON *at, int at_key,
                     const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int cost_fail(const cost_ctx *c, const cJSON *at, int at_key,
                     const char *path, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    msg_vset(msg, sizeof msg, 0, fmt, ap);
    va_end(ap);
    size_t off = 0;
    for (size_t i = 0; i < c->doc->npos; i++)
        if (c->doc->pos[i].node == at) {
            const json_pos *p = &c->doc->pos[i];
            off = at_key && p->key != JSON_NO_POS ? p->key : p->val;
            break;
        }
    int line, col;
    json_line_col(c->text, off, &line, &col);
    return msg_set(c->err, c->errlen, MSG_EINPUT, "%s:%d:%d: %s: %s", c->name,
                   line, col, path, msg);
}

/* A finite number in [lo, hi], an integer when asked. */
static int cost_number(const cost_ctx *c, const cJSON *it, const char *key,
                       double lo, double hi, int integer, double *out) {
    const char *what = integer ? "an integer" : "a number";
    char b[MSG_NUM_MAX], l[MSG_NUM_MAX], h[MSG_NUM_MAX];
    if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
        return cost_fail(c, it, 0, key, "must be %s (expected %s in [%s, %s])",
                         what, what, msg_number(lo, l), msg_number(hi, h));
    double x = it->valuedouble;
    if (x < lo || (integer && x != floor(x)) || x > hi)
        return cost_fail(c, it, 0, key,
                         "must be %s >= %s, at most %s "
                         "(got %s)",
                         what, msg_number(lo, l), msg_number(hi, h),
                         msg_number(x, b));
    *out = x;
    return 0;
}

static int cost_bandwidths(const cost_ctx *c, const cJSON *it, plan_cost *out) {
    const char *key = cost_key[K_BANDWIDTHS];
    int n = cJSON_GetArraySize(it);
    if (!cJSON_IsArray(it) || n < 1 || n > PLAN_MAX_BANDWIDTHS)
        return cost_fail(c, it, 0, key,
                         "must be an array of 1 to %d "
                         "bandwidths (expected [G, ...], Gbit/s)",
                         PLAN_MAX_BANDWIDTHS);
    const cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, it) {
        char path[64];
        snprintf(path, sizeof path, "%s[%d]", key, i);
        if (cost_number(c, e, path, SCN_MIN_GBPS, SCN_MAX_GBPS, 0,
                        &out->bandwidths_gbps[i]))
            return MSG_EINPUT;
        i++;
    }
    out->nbandwidths = n;
    return 0;
}

/* links[i]: {"gbps": > 0, "usd_month": >= 0}, both required, faster
 * than links[i - 1]. */
static int cost_link(const cost_ctx *c, const cJSON *it, int i,
                     plan_cost *out) {
    char path[64], key[80], names[64];
    snprintf(path, sizeof path, "links[%d]", i);
    msg_name_list(link_key, 2, names, sizeof names);
    if (!cJSON_IsObject(it))
        return cost_fail(c, it, 0, path,
                         "must be an object (expected the keys %s)", names);
    const cJSON *seen[2] = {0}, *e;
    cJSON_ArrayForEach(e, it) {
        int k = msg_parse_name(e->string, link_key, 2);
        snprintf(key, sizeof key, "%s.%s", path, e->string);
        if (k < 0)
            return cost_fail(c, e, 1, key, "unknown key (expected one of: %s)",
                             names);
        if (seen[k]) return cost_fail(c, e, 1, key, "duplicate key");
        seen[k] = e;
        double *dst = k ? &out->link_usd_month[i] : &out->bandwidths_gbps[i];
        if (cost_number(c, e, key, k ? 0 : SCN_MIN_GBPS,
                        k ? COST_MAX : SCN_MAX_GBPS, 0, dst))
            return MSG_EINPUT;
    }
    for (int k = 0; k < 2; k++)
        if (!seen[k]) {
            snprintf(key, sizeof key, "%s.%s", path, link_key[k]);
            return cost_fail(c, it, 0, key, "missing (expected %s)", names);
        }
    char a[MSG_NUM_MAX], b[MSG_NUM_MAX];
    if (i > 0 && !(out->bandwidths_gbps[i] > out->bandwidths_gbps[i - 1])) {
        snprintf(key, sizeof key, "%s.gbps", path);
        return cost_fail(c, seen[0], 0, key,
                         "must be more than links[%d].gbps (got %s after %s: "
                         "expected the links by increasing speed, each once)",
                         i - 1, msg_number(out->bandwidths_gbps[i], a),
                         msg_number(out->bandwidths_gbps[i - 1], b));
    }
    return 0;
}

static int cost_links(const cost_ctx *c, const cJSON *it, plan_cost *out) {
    int n = cJSON_GetArraySize(it);
    if (!cJSON_IsArray(it) || n < 1 || n > PLAN_MAX_BANDWIDTHS)
        return cost_fail(c, it, 0, "links",
                         "must be an array of 1 to %d links (expected "
                         "[{\"gbps\": G, \"usd_month\": P}, ...])",
                         PLAN_MAX_BANDWIDTHS);
    const cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, it) {
        if (cost_link(c, e, i, out)) return MSG_EINPUT;
        i++;
    }
    out->nbandwidths = n;
    out->has_links = 1;
    return 0;
}

/* "currency": three capital letters (ISO 4217). */
static int cost_currency(const cost_ctx *c, const cJSON *it, plan_cost *out) {
    const char *s = cJSON_IsString(it) ? it->valuestring : "";
    int ok = strlen(s) == 3;
    for (int i = 0; ok && i < 3; i++) ok = s[i] >= 'A' && s[i] <= 'Z';
    if (!ok)
        return cost_fail(c, it, 0, "currency",
                         "must be a 3-letter currency code in capitals "
                         "(expected e.g. \"USD\", \"EUR\")");
    memcpy(out->currency, s, 4);
    return 0;
}

static int cost_member(const cost_ctx *c, const cJSON *it, int k,
                       plan_cost *out) {
    switch (k) {
    case K_LINKS: return cost_links(c, it, out);
    case K_CURRENCY: return cost_currency(c, it, out);
    case K_WAN:
        return cost_number(c, it, cost_key[k], 0, COST_MAX, 0,
                           &out->wan_usd_per_gbps_month);
    case K_ACC_PRICE:
        return cost_number(c, it, cost_key[k], 0, COST_MAX, 0,
                           &out->accelerator_usd_per_hour);
    case K_ACC:
        return cost_number(c, it, cost_key[k], 1, COST_MAX, 1,
                           &out->accelerators);
    case K_PRICING: {
        int i = cJSON_IsString(it)
                    ? msg_parse_name(it->valuestring, pricing_name, 2)
                    : -1;
        if (i < 0)
            return cost_fail(c, it, 0, cost_key[k],
                             "must be \"port\" (each "
                             "worker's link) or \"link\" (each link between "
                             "two sites)");
        out->pricing = (plan_pricing)i;
        return 0;
    }
    case K_EGRESS:
        out->has_egress = 1;
        return cost_number(c, it, cost_key[k], 0, COST_MAX, 0,
                           &out->egress_usd_per_gb);
    default: return cost_bandwidths(c, it, out);
    }
}

static int cost_object(const cost_ctx *c, const cJSON *root, plan_cost *out) {
    char names[200];
    msg_name_list(cost_key, NKEYS, names, sizeof names);
    if (!cJSON_IsObject(root))
        return cost_fail(c, root, 0, "(root)",
                         "must be a JSON object "
                         "(expected the keys %s)",
                         names);
    const cJSON *seen[NKEYS] = {0}, *it;
    cJSON_ArrayForEach(it, root) {
        int k = msg_parse_name(it->string, cost_key, NKEYS);
        if (k < 0) {
            int near = msg_nearest_name(it->string, cost_key, NKEYS, 2);
            return cost_fail(c, it, 1, it->string,
                             "unknown key (%s%s%s"
                             "expected one of: %s)",
                             near < 0 ? "" : "did you mean ",
                             near < 0 ? "" : cost_key[near],
                             near < 0 ? "" : "? ", names);
        }
        if (seen[k]) {
            int line, col;
            size_t off = 0;
            for (size_t i = 0; i < c->doc->npos; i++)
                if (c->doc->pos[i].node == seen[k]) off = c->doc->pos[i].key;
            json_line_col(c->text, off, &line, &col);
            return cost_fail(c, it, 1, it->string,
                             "duplicate key (first "
                             "given at %d:%d)",
                             line, col);
        }
        seen[k] = it;
        if (cost_member(c, it, k, out)) return MSG_EINPUT;
    }
    if (seen[K_LINKS] && (seen[K_BANDWIDTHS] || seen[K_WAN])) {
        int k = seen[K_BANDWIDTHS] ? K_BANDWIDTHS : K_WAN;
        return cost_fail(c, seen[k], 1, cost_key[k],
                         "not with links (expected either links, each "
                         "speed with its price, or %s with %s)",
                         cost_key[K_WAN], cost_key[K_BANDWIDTHS]);
    }
    for (int k = seen[K_LINKS] ? 1 : 0; k < K_BANDWIDTHS; k++)
        if (!seen[k])
            return cost_fail(c, root, 0, cost_key[k],
                             "missing (expected "
                             "%s, %s and %s)",
                             cost_key[0], cost_key[1], cost_key[2]);
    return 0;
}

int plan_cost_parse_n(const char *text, size_t len, const char *name,
                      plan_cost *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (len > COST_MAX_BYTES)
        return msg_set(err, errlen, MSG_EINPUT,
                       "%s: larger than 64 KiB "
                       "(expected a cost file of at most %d bytes)",
                       name, COST_MAX_BYTES);
    size_t bom = json_bom(text, len);
    text += bom, len -= bom;
    json_doc doc;
    size_t at;
    char msg[128];
    int rc = json_parse(text, len, &doc, &at, msg, sizeof msg);
    if (rc == MSG_EINPUT) {
        int line, col;
        json_line_col(text, at, &line, &col);
        return msg_set(err, errlen, rc, "%s:%d:%d: syntax error (%s)", name,
                       line, col, msg);
    }
    if (rc) return msg_set(err, errlen, rc, "%s: %s", name, msg);
    cost_ctx c = {name, text, &doc, err, errlen};
    rc = cost_object(&c, doc.root, out);
    json_doc_free(&doc);
    if (rc) memset(out, 0, sizeof *out);
    if (!out->currency[0]) memcpy(out->currency, "USD", 4);
    return rc;
}

int plan_cost_parse(const char *text, const char *name, plan_cost *out,
                    char *err, size_t errlen) {
    return plan_cost_parse_n(text, strlen(text), name, out, err, errlen);
}

int plan_cost_load(const char *path, plan_cost *out, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return msg_set(err, errlen, MSG_EINPUT, "%s: cannot open: %s", path,
                       strerror(errno));
    char *buf = malloc(COST_MAX_BYTES + 2);
    if (!buf) {
        fclose(f);
        return msg_set(err, errlen, MSG_ENOMEM, "%s: out of memory", path);
    }
    size_t n = fread(buf, 1, COST_MAX_BYTES + 1, f);
    int bad = ferror(f), e = errno;
    fclose(f);
    int rc;
    if (bad)
        rc = msg_set(err, errlen, MSG_EINPUT, "%s: cannot read: %s", path,
                     strerror(e));
    else {
        buf[n] = 0;
        rc = plan_cost_parse_n(buf, n, path, out, err, errlen);
    }
    free(buf);
    return rc;
}
