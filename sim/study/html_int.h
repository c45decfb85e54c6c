/*
 * html_int.h -- what the report page's files (html.c, html_assume.c)
 * share; included by them only.
 */
#ifndef DILOSIM_HTML_INT_H
#define DILOSIM_HTML_INT_H

#include <stdio.h>

/* <tag>s</tag> (tag "th" or "td"), with class="cls" unless cls is NULL,
 * s escaped (html_escape). */
void html__cell(FILE *f, const char *tag, const char *cls, const char *s);

#endif
