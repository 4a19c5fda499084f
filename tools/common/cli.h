/*
 * Command-line pieces shared by tuna-bench and the applications: integer options with a
 * range, seeds, and getopt_long's error cases, each failing with one line that names the
 * option and the bad text (written to err).
 */
#ifndef TUNA_CLI_H
#define TUNA_CLI_H

#include <stddef.h>

/* text must be a whole decimal integer in [lo, hi]; hi == LONG_MAX means no upper bound. */
int cli_long(const char *option, const char *text, long lo, long hi, long *out, char *err,
             size_t errlen);
/* As cli_long, into an int (hi at most INT_MAX). */
int cli_int(const char *option, const char *text, int lo, int hi, int *out, char *err,
            size_t errlen);
/* --seed: a non-negative decimal integer. */
int cli_seed(const char *text, unsigned long long *out, char *err, size_t errlen);
/* getopt_long returned ':' (missing value) or '?' (unknown option): the message. Returns -1. */
int cli_getopt_error(int c, char **argv, char *err, size_t errlen);
/* Rejects positional arguments left after getopt_long. Returns 0 or -1. */
int cli_no_positional(int argc, char **argv, char *err, size_t errlen);

#endif /* TUNA_CLI_H */
