/*
 * CHECK for the tools' single-process unit tests (test_distributions, test_mtx): counts
 * checks and failures, prints the failing condition and a message; include once per test.
 */
#ifndef TUNA_UNIT_CHECK_H
#define TUNA_UNIT_CHECK_H

#include <stdio.h>

static int failures, checks;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        checks++;                                                          \
        if (!(cond)) {                                                     \
            failures++;                                                    \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

#endif /* TUNA_UNIT_CHECK_H */
