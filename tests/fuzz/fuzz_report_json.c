/* Fuzz target for knee report's JSON inputs (jansson parses): a knee run document (knee
 * rebuilds the terminal summary and reads the plan and timeline from whatever it holds) and a
 * knee compare, capacity or --repeat document (checked, its SLO parsed, the queueing
 * predictions computed): any byte string must load or fail with a message, and whatever
 * loaded must write a report; never crash or leak. */
#include "html/html.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct html_report *rep = html_report_new();
    struct html_run *run = html_report_add_run(rep, "fuzz");
    char err[512] = "";
    if (html_run_load_json_mem(run, data, size, "input", err, sizeof err) != 0) {
        if (strlen(err) == 0)
            abort(); /* every failure explains itself */
    } else {
        FILE *f = fopen("/dev/null", "w");
        if (!f || html_report_write(rep, f, err, sizeof err) != 0)
            abort();
        fclose(f);
    }
    html_report_free(rep);

    rep = html_report_new();
    html_report_set_service_time(rep, 0.005);
    if (html_report_add_document_mem(rep, "fuzz", data, size, "input", err, sizeof err) != 0) {
        if (strlen(err) == 0)
            abort();
    } else {
        FILE *f = fopen("/dev/null", "w");
        if (!f || html_report_write(rep, f, err, sizeof err) != 0)
            abort();
        fclose(f);
    }
    html_report_free(rep);
    return 0;
}
