/*
 * cli_plan_sum.c -- the summary that opens `dilosim plan`'s text: the
 * decision first (plan_summary_text's sentences: what to buy, the
 * runner-up and why it lost, the margin to the target, the links' load,
 * the training), wrapped for a terminal.
 */
#include <stdio.h>
#include <string.h>

#include "sim/cli/cli_plan.h"

#define WRAP_COLS 78

/* Text as lines of at most WRAP_COLS columns, broken at spaces: the first
 * indented by 2, the rest by 4 (a word longer than a line stays whole). */
static void wrapped(FILE *f, const char *text) {
    if (!*text) return;
    const char *p = text;
    int indent = 2;
    while (*p) {
        int room = WRAP_COLS - indent, n = (int)strlen(p);
        if (n > room) {
            int cut = room;
            while (cut > 0 && p[cut] != ' ') cut--;
            if (cut == 0)
                while (p[cut] && p[cut] != ' ') cut++;
            n = cut;
        }
        fprintf(f, "%*s%.*s\n", indent, "", n, p);
        p += n;
        while (*p == ' ') p++;
        indent = 4;
    }
}

void cli_plan_text_summary(FILE *f, const plan_result *r) {
    plan_summary s;
    plan_summary_text(r, &s);
    fputs("summary:\n", f);
    wrapped(f, s.buy);
    wrapped(f, s.runner);
    wrapped(f, s.margin);
    wrapped(f, s.headroom);
    wrapped(f, s.training);
    wrapped(f, "quality: not assessed here (the plan simulates time, not "
               "the loss; 'dilosim report' of a scenario with a train "
               "section runs a small model of each method)");
    fputc('\n', f);
}
