/*
 * The tests' watchdog: a hang fails the run after a time, naming what the test was doing
 * (`current`, which the test points at its case). Include after P and me are defined
 * (test_expect.h defines them).
 */
#ifndef TUNA_TEST_WATCHDOG_H
#define TUNA_TEST_WATCHDOG_H

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

/* What the test is doing, for the watchdog's report. */
static const char *current = "start";

static void on_alarm(int sig)
{
    (void)sig;
    char msg[256];
    int n = snprintf(msg, sizeof msg, "FAIL P=%d rank=%d: HANG in %s\n", P, me, current);
    if (n > 0)
        (void)!write(2, msg, (size_t)n);
    _exit(1);
}

/* A hang from now on fails the run after `seconds`. */
static inline void watchdog_start(unsigned seconds)
{
    signal(SIGALRM, on_alarm);
    alarm(seconds);
}

#endif /* TUNA_TEST_WATCHDOG_H */
