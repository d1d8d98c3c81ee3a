/* The outcome classes of a planned request and the per-request record. The per-request
 * binary log (reqlog, another module) owns both definitions; until it is merged this header
 * carries an identical copy so the engine, its CSV log and the reports use one vocabulary. */
#ifndef KNEE_LOAD_OUTCOME_H
#define KNEE_LOAD_OUTCOME_H

#include <stdint.h>

#if __has_include("reqlog/reqlog.h")
#include "reqlog/reqlog.h"
#define RUN_HAVE_REQLOG 1
#else
#define RUN_HAVE_REQLOG 0
/* Every planned request ends in exactly one of these (see docs/FORMATS.md, "knee run"). */
enum reqlog_outcome {
    OUTCOME_OK,         /* expected status (default 2xx/3xx) and --expect-body found: goodput */
    OUTCOME_REJECTED,   /* a business rejection the user declared (--reject) */
    OUTCOME_HTTP_ERROR, /* any other status */
    OUTCOME_INVALID,    /* unparseable response or a failed check */
    OUTCOME_TRANSPORT,  /* refused, reset, EOF before a full response */
    OUTCOME_TIMEOUT,    /* no full response within --timeout */
    OUTCOME_DROPPED,    /* planned but never sent (--when-busy drop, or still queued at the end) */
    OUTCOME_CANCELLED,  /* still in flight when the run ended after --drain */
    OUTCOME_COUNT
};

/* One request; times in ns since run start (t0), 0 when the event did not happen. */
struct reqlog_record {
    uint64_t planned_ns, sent_ns, first_byte_ns, done_ns, connect_ns, bytes;
    uint32_t target, connection;
    uint16_t status;
    uint8_t outcome, flags; /* flags bit0 = warm-up */
};

static inline const char *reqlog_outcome_name(enum reqlog_outcome o)
{
    static const char *const names[OUTCOME_COUNT] = {"ok",      "rejected", "http_error", "invalid",
                                                     "transport", "timeout", "dropped",    "cancelled"};
    return (unsigned)o < OUTCOME_COUNT ? names[o] : "?";
}
#endif

#define REQLOG_FLAG_WARMUP 1u

#endif
