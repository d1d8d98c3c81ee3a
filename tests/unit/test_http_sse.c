/* Unit tests for src/http/sse (the events of a streamed body) and its use by the response
 * parser: SSE event boundaries split at every byte position, CRLF, LF and CR line ends, comments
 * and data-less blocks (no event), a body ending inside an event, Content-Type matching, the
 * --stream modes (auto, sse, chunks, off) over chunked and Content-Length bodies, and the
 * stream histograms' merge and statistics (record/stream.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "http/response.h"
#include "http/sse.h"
#include "record/record.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static uint32_t scan_all(const char *s, struct sse_scan *sc)
{
    memset(sc, 0, sizeof *sc);
    return sse_scan_feed(sc, s, strlen(s));
}

static void test_boundaries(void **state)
{
    (void)state;
    struct sse_scan sc;
    assert_int_equal(scan_all("data: a\n\n", &sc), 1);
    assert_false(sse_scan_partial(&sc));
    assert_int_equal(scan_all("data: a\r\n\r\n", &sc), 1);
    assert_int_equal(scan_all("data: a\r\rdata: b\r\r", &sc), 2);
    assert_int_equal(scan_all("data: a\ndata: b\n\n", &sc), 1); /* two data lines, one event */
    assert_int_equal(scan_all("id: 1\nevent: x\ndata: y\n\nid: 2\ndata: z\n\n", &sc), 2);
    assert_int_equal(scan_all("data\n\n", &sc), 1); /* a data field with no value */
    assert_int_equal(scan_all("data:\n\n", &sc), 1);
    assert_int_equal(scan_all(": keep-alive\n\n", &sc), 0); /* a comment: no event */
    assert_int_equal(scan_all(": ping\n: ping\n\ndata: x\n\n", &sc), 1);
    assert_int_equal(scan_all("id: 3\nevent: x\n\n", &sc), 0);   /* no data: nothing dispatched */
    assert_int_equal(scan_all("datum: x\n\ndatax\n\n", &sc), 0); /* names that start like data */
    assert_int_equal(scan_all("\n\n\n", &sc), 0);
    assert_int_equal(scan_all("data: a\n\ndata: b", &sc), 1);
    assert_true(sse_scan_partial(&sc)); /* ended inside the second event */
    assert_int_equal(scan_all("data: a\n", &sc), 0);
    assert_true(sse_scan_partial(&sc)); /* a data line without its blank line */
    assert_int_equal(scan_all(": c\n", &sc), 0);
    assert_false(sse_scan_partial(&sc)); /* a comment line ended: nothing pending */
}

/* Every split into two parts, and one byte at a time, finds the same events. */
static void test_splits_at_every_byte(void **state)
{
    (void)state;
    static const char *const bodies[] = {
        "data: a\n\nid: 2\ndata: b\r\n\r\n: c\n\ndata: d\r\rdata\n\n",
        "event: t\r\ndata: {\"i\":0}\r\n\r\ndata: x\n\n",
    };
    static const uint32_t want[] = {4, 2};
    for (size_t b = 0; b < sizeof bodies / sizeof bodies[0]; b++) {
        size_t n = strlen(bodies[b]);
        for (size_t cut = 0; cut <= n; cut++) {
            struct sse_scan sc;
            memset(&sc, 0, sizeof sc);
            uint32_t ev = sse_scan_feed(&sc, bodies[b], cut);
            ev += sse_scan_feed(&sc, bodies[b] + cut, n - cut);
            assert_int_equal(ev, want[b]);
            assert_false(sse_scan_partial(&sc));
        }
        struct sse_scan sc;
        memset(&sc, 0, sizeof sc);
        uint32_t ev = 0;
        for (size_t i = 0; i < n; i++)
            ev += sse_scan_feed(&sc, bodies[b] + i, 1);
        assert_int_equal(ev, want[b]);
    }
}

static void test_content_type_and_modes(void **state)
{
    (void)state;
    assert_true(http_content_type_is_sse("text/event-stream", 17));
    assert_true(http_content_type_is_sse("Text/Event-Stream; charset=utf-8", 32));
    assert_false(http_content_type_is_sse("text/event-streams", 18));
    assert_false(http_content_type_is_sse("text/plain", 10));
    enum http_stream_mode m;
    assert_int_equal(http_stream_mode_parse("chunks", &m), 0);
    assert_int_equal(m, HTTP_STREAM_CHUNKS);
    assert_int_equal(http_stream_mode_parse("off", &m), 0);
    assert_int_equal(m, HTTP_STREAM_OFF);
    assert_int_equal(http_stream_mode_parse("yes", &m), KNEE_EINVAL);
    assert_string_equal(http_stream_mode_name(HTTP_STREAM_SSE), "sse");
}

static const char CHUNKED[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "f\r\ndata: {\"i\":0}\n\n\r\n"
                              "f\r\ndata: {\"i\":1}\n\n\r\n"
                              "5\r\n: c\n\n\r\n"
                              "0\r\n\r\n";

/* Feed a response in two parts cut at `cut`; returns its events. */
static uint32_t feed_response(const char *s, size_t n, size_t cut, enum http_stream_mode mode, bool *on, bool *partial)
{
    struct http_response r;
    http_response_init(&r, NULL, false);
    r.ev.mode = (uint8_t)mode;
    size_t used = 0;
    enum http_feed f = http_response_feed(&r, s, cut, &used);
    if (f == HTTP_FEED_MORE)
        f = http_response_feed(&r, s + cut, n - cut, &used);
    assert_int_equal(f, HTTP_FEED_DONE);
    *on = r.ev.on;
    *partial = http_events_partial(&r.ev);
    if (r.ev.count) {
        assert_true(r.ev.first_ns > 0);
        assert_true(r.ev.last_ns >= r.ev.first_ns);
    }
    return r.ev.count;
}

static void test_response_modes(void **state)
{
    (void)state;
    size_t n = sizeof CHUNKED - 1;
    bool on, partial;
    for (size_t cut = 1; cut < n; cut++) {
        assert_int_equal(feed_response(CHUNKED, n, cut, HTTP_STREAM_AUTO, &on, &partial), 2);
        assert_true(on);
        assert_false(partial);
        assert_int_equal(feed_response(CHUNKED, n, cut, HTTP_STREAM_CHUNKS, &on, &partial), 3); /* a chunk each */
        assert_int_equal(feed_response(CHUNKED, n, cut, HTTP_STREAM_OFF, &on, &partial), 0);
        assert_false(on);
    }
    /* the fast path (Content-Length): SSE by Content-Type too */
    static const char CL[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 18\r\n\r\n"
                             "data: a\n\ndata: b\n\n";
    assert_int_equal(feed_response(CL, sizeof CL - 1, sizeof CL - 1, HTTP_STREAM_AUTO, &on, &partial), 2);
    static const char PLAIN[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\ndata: a\n\n";
    assert_int_equal(feed_response(PLAIN, sizeof PLAIN - 1, 5, HTTP_STREAM_AUTO, &on, &partial), 0);
    assert_false(on);
    assert_int_equal(feed_response(PLAIN, sizeof PLAIN - 1, 5, HTTP_STREAM_SSE, &on, &partial), 1); /* forced */
    assert_true(on);
    /* a body that ends inside an event */
    static const char CUT[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 14\r\n\r\n"
                              "data: a\n\ndata:";
    assert_int_equal(feed_response(CUT, sizeof CUT - 1, 40, HTTP_STREAM_AUTO, &on, &partial), 1);
    assert_true(partial);
}

/* Two threads' stream histograms merged; the events-per-response statistics are counts. */
static void test_record_stream(void **state)
{
    (void)state;
    struct run_stream a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    record_stream_hist(&a.first_event, 30000000, 1);
    record_stream_hist(&a.event_gap, 10000000, 4);
    record_stream_hist(&a.per_response, 5, 1);
    a.events = 5;
    a.responses = 1;
    record_stream_hist(&b.event_gap, 0, 2);
    record_stream_hist(&b.per_response, 3, 1);
    b.events = 3;
    b.responses = 1;
    struct run_stream all;
    memset(&all, 0, sizeof all);
    record_stream_add(&all, &a);
    record_stream_add(&all, &b);
    struct run_stream_sum s;
    record_stream_summarize(&all, 2.0, &s);
    assert_true(s.present);
    assert_int_equal(s.events, 8);
    assert_int_equal(s.responses, 2);
    assert_int_equal(s.first_event.count, 1);
    assert_int_equal(s.event_gap.count, 6);
    assert_true(fabs(s.event_gap.max - 10.0) < 0.01);
    assert_true(fabs(s.per_response.max - 5.0) < 1e-9);
    assert_true(fabs(s.per_response.mean - 4.0) < 1e-9);
    assert_true(fabs(s.events_per_s - 4.0) < 1e-9);
    struct run_stream none;
    memset(&none, 0, sizeof none);
    record_stream_summarize(&none, 1.0, &s);
    assert_false(s.present);
    /* an interval's, reset for the next: empty, its histograms kept; an unallocated one too */
    record_stream_reset(&all);
    assert_true(all.events == 0 && all.responses == 0 && all.event_gap.counts && all.event_gap.total_count == 0);
    record_stream_summarize(&all, 1.0, &s);
    assert_false(s.present);
    record_stream_reset(&none);
    assert_null(none.first_event.counts);
    record_stream_release(&a);
    record_stream_release(&b);
    record_stream_release(&all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_boundaries),
        cmocka_unit_test(test_splits_at_every_byte),
        cmocka_unit_test(test_content_type_and_modes),
        cmocka_unit_test(test_response_modes),
        cmocka_unit_test(test_record_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
