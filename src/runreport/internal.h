/* What the files of src/runreport share (text.c: the pieces; summary.c: the summary's forms and
 * its headline; warnings.c: the warnings by cause; pictures.c: the terminal pictures and the
 * shard lines). Private to src/runreport. */
#ifndef KNEE_RUNREPORT_INTERNAL_H
#define KNEE_RUNREPORT_INTERNAL_H

#include "runreport/runreport.h"

#include "core/err.h"
#include "core/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* s with its control bytes escaped into buf (core/err knee_escape): text from the command line
 * or the network never becomes a terminal control sequence. Returns buf. */
const char *rr_esc(const char *s, char *buf, size_t len);

/* A transport cause as the summary names it ("tls verify"), into buf; returns buf. */
const char *rr_cause_name(enum run_transport_cause k, char *buf, size_t len);

/* Under the outcomes of c: why the transport failures failed and how many requests were sent
 * again; the statuses of t's responses that were not ok (both print nothing when there is
 * nothing to say). */
void rr_transport_line(FILE *out, const struct run_record *r, const struct run_counts *c, const char *indent);
void rr_status_lines(FILE *out, const struct run_record *r, const struct run_target_result *t, const char *indent);

/* Under the connections line: certificate verification, each target's TLS and HTTP/2 lines. */
void rr_transport_lines(FILE *out, const struct run_record *v);

/* The plan's head line and one line per target; brief: the default summary's shorter lines (no
 * pool, no resolve time, one target without its rate and a name taken from its URL). */
void rr_plan_line(FILE *out, const struct run_record *v, bool brief);
/* Under the plan of an open loop with sends: "  precision: lag p99 0.054 ms; generator CPU
 * 31.2 us per request sent" (the precision the run kept, and its price: the generator's
 * threads' user + system CPU over every request sent, warm-up included); with --timer-slack
 * auto the largest slack it chose; "; kernel-timed reads" when responses were read at the next
 * wake, timed by the kernel (run_record.reads_deferred). Nothing otherwise (no sends, closed
 * loop). */
void rr_precision_line(FILE *out, const struct run_record *v);
/* "  connections: through the proxy H:P; from A,B (round-robin); at most R new/s" when the run
 * had --proxy, --local-address or --connect-rate (nothing otherwise). */
void rr_route_line(FILE *out, const struct record_config *c);

/* The warnings (the record's, by cause, the most consequential first: warnings.c) and the
 * thresholds; verbose: every note, else only the notes that change what a reader may conclude. */
void rr_print_warnings(FILE *out, const struct run_record *v, bool verbose);

#endif
