/* knee run's --shard, --shards and --start-at: which shard of the plan this process runs
 * (given, or from the scheduler that started it) and the shared wall-clock instant its plan
 * starts at. Private to src/cli (runopts_build calls cli_shard_args). */
#ifndef KNEE_CLI_SHARD_FLAGS_H
#define KNEE_CLI_SHARD_FLAGS_H

#include <stddef.h>
#include <stdint.h>

#include "cli/opt.h"
#include "load/run.h"

/* The environment variables read, in this order, by --shard auto (and --shards N): */
#define RUN_SHARD_ENV_BASE "KNEE_START_BASE" /* the shared instant of --start-at +D */
#define RUN_SHARD_ENV_COUNT "KNEE_SHARDS"    /* the count beside JOB_COMPLETION_INDEX */

/* Fill cfg->plan.shard (index, count, source) from the flags: shard is "I/N", "auto" or
 * NULL; shards is --shards N (0 when not given). "auto", or --shards alone, reads the
 * scheduler's environment: Slurm (SLURM_PROCID, SLURM_NTASKS), Kubernetes Indexed Jobs
 * (JOB_COMPLETION_INDEX with --shards N or KNEE_SHARDS), Open MPI (OMPI_COMM_WORLD_RANK,
 * OMPI_COMM_WORLD_SIZE), PMI (PMI_RANK, PMI_SIZE). 0, or 2 after one line naming the flag. */
int cli_shard_args(const struct cmd_spec *spec, const char *shard, uint64_t shards, struct run_config *cfg);

/* --start-at TIME → *unix_ns: Unix seconds ("1764507600", "1764507600.25"), RFC 3339
 * ("2026-11-30T13:00:00Z", "2026-11-30T14:00:00.5+01:00"), "+D" (a duration after the instant
 * in $KNEE_START_BASE) or "+D@FILE" (after the instant written in FILE; when FILE does not
 * exist yet, the first process to get there writes the present instant into it, atomically, and
 * every later one reads it: processes started at different moments agree). now_unix_ns is the
 * present. 0, or KNEE_EINVAL / -errno with a reason in err. */
int cli_start_at_parse(const char *s, uint64_t now_unix_ns, uint64_t *unix_ns, char *err, size_t errlen);

/* An absolute instant: Unix seconds or RFC 3339 (as above, without "+D"). 0 or KNEE_EINVAL. */
int cli_instant_parse(const char *s, uint64_t *unix_ns);

/* --start-at checked against the plan: refused when it lies more than a day ahead or when the
 * whole plan (cfg->plan.duration_ns, or an hour with --requests) would already be over. 0 or 2. */
int cli_start_at_args(const struct cmd_spec *spec, const char *start_at, struct run_config *cfg);

#endif
