/* TEMPORARY: stands in for i32core's metrics_render_remote_write until that branch is merged
 * (an empty WriteRequest). Deleted at the merge. */
#include "core/pb.h"
#include "metrics/metrics.h"

int metrics_render_remote_write(struct metrics_registry *reg, const char *const *extra_kv, size_t nextra, int64_t ts_ms,
                                struct pb_buf *out, char *err, size_t errlen);

int metrics_render_remote_write(struct metrics_registry *reg, const char *const *extra_kv, size_t nextra, int64_t ts_ms,
                                struct pb_buf *out, char *err, size_t errlen)
{
    (void)reg, (void)extra_kv, (void)nextra, (void)ts_ms, (void)out, (void)err, (void)errlen;
    return 0;
}
