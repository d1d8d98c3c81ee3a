/* The shard part of knee run's summary (--shard, --start-at) and of a merged record (knee
 * merge): the line after the summary. The "shard" object of the JSON is the record's
 * (record/json_write.c); the line printed before a shard starts is the command line's
 * (cli/run_print.h). */
#ifndef KNEE_RUNREPORT_SHARD_H
#define KNEE_RUNREPORT_SHARD_H

#include <stdio.h>

#include "record/record.h"

/* After the summary: the shard's skew against the start instant and the clock's state, or a
 * merge's shards (skews, generator-limited and failed shards). Nothing without a shard record. */
void run_print_shard_result(FILE *out, const struct run_result *res);

#endif
