/* The outcome classes of a planned request and the per-request record: the load engine uses
 * the definitions of the binary request log (reqlog), so `knee run`, its logs and `knee stats`
 * share one vocabulary. */
#ifndef KNEE_LOAD_OUTCOME_H
#define KNEE_LOAD_OUTCOME_H

#include "reqlog/reqlog.h"

#define RUN_HAVE_REQLOG 1

#endif
