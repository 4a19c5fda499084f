/*
 * The statistics record every collective keeps (tuna_stats_enable, tuna_stats_last): the
 * per-thread record of the running call and how a call's record is published.
 */
#include "tuna_internal.h"

int tuna_stats_on;
_Thread_local tuna_stats tuna_stats_thread;
_Thread_local tuna_stats *tuna_stats_cur;
static _Thread_local tuna_stats stats_last;

void tuna_stats_enable(int on)
{
    tuna_stats_on = on != 0;
}

const tuna_stats *tuna_stats_last(void)
{
    return &stats_last;
}

void tuna_stats_publish(double t_start)
{
    if (!tuna_stats_on)
        return;
    tuna_stats_current.total = PMPI_Wtime() - t_start;
    stats_last = tuna_stats_current;
}

void tuna_stats_publish_record(const tuna_stats *record)
{
    stats_last = *record;
}

const char *tuna_phase_name(tuna_phase phase)
{
    static const char *const names[TUNA_PHASE_COUNT] = {
        "prepare", "metadata", "data", "copy", "rearrange", "inter"};
    return (int)phase >= 0 && phase < TUNA_PHASE_COUNT ? names[phase] : "?";
}

void tuna_stats_publish_library(double t_start)
{
    tuna_stats_publish(t_start);
    if (tuna_stats_on) /* all of the call is the library's data exchange */
        stats_last.phase[TUNA_PHASE_DATA] = stats_last.total;
}
