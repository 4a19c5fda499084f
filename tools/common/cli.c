/* Command-line pieces shared by tuna-bench and the applications (see cli.h). */
#include "cli.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

int cli_long(const char *option, const char *text, long lo, long hi, long *out, char *err,
             size_t errlen)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < lo || v > hi) {
        if (hi == LONG_MAX)
            snprintf(err, errlen, "%s '%s': expected an integer >= %ld", option, text, lo);
        else
            snprintf(err, errlen, "%s '%s': expected an integer in [%ld, %ld]", option, text,
                     lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_int(const char *option, const char *text, int lo, int hi, int *out, char *err,
            size_t errlen)
{
    long v;
    if (cli_long(option, text, lo, hi == INT_MAX ? LONG_MAX : hi, &v, err, errlen) ||
        v > INT_MAX) {
        snprintf(err, errlen, "%s '%s': expected an integer in [%d, %d]", option, text, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int cli_seed(const char *text, unsigned long long *out, char *err, size_t errlen)
{
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || *end || text[0] == '-') {
        snprintf(err, errlen, "--seed '%s': expected a non-negative integer", text);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_getopt_error(int c, char **argv, char *err, size_t errlen)
{
    if (c == ':')
        snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
    else
        snprintf(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
    return -1;
}

int cli_no_positional(int argc, char **argv, char *err, size_t errlen)
{
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
        return -1;
    }
    return 0;
}
