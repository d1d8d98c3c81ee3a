/* Fuzz target for the hlog decoders: the first byte picks the entry point —
 *   even: the bytes are a log; every line goes through the reader, every histogram through
 *         the base64 + V2 decoder, and the decoded histograms are summed and printed;
 *   odd:  the rest is a binary V2 encoding (compressed or not) for hlog_decode, then re-encoded
 *         and decoded again, which must give the same counts. */
#include "hlog/codec.h"
#include "hlog/hlog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_log(const uint8_t *data, size_t size)
{
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return;
    struct hlog_reader *r = hlog_reader_new(f, "fuzz.hlog");
    struct hlog_entry e;
    struct hlog_acc acc;
    hlog_acc_init(&acc);
    while (hlog_reader_next(r, &e) == 1) {
        struct hdr h;
        if (hlog_reader_decode(r, &e, &h) != 0)
            continue;
        hlog_acc_add(&acc, &h, NULL, 0);
        hdr_release(&h);
    }
    if (acc.used) {
        FILE *out = fopen("/dev/null", "w");
        if (out) {
            hdr_percentiles_print(out, &acc.h, 5, 1e6, false);
            fclose(out);
        }
    }
    hlog_acc_release(&acc);
    hlog_reader_free(r);
    fclose(f);
}

static void fuzz_binary(const uint8_t *data, size_t size)
{
    struct hlog_codec *c = hlog_codec_new();
    struct hdr h;
    if (hlog_decode(c, data, size, &h, NULL, 0) == 0) {
        const uint8_t *bin;
        size_t n;
        if (hlog_encode(c, &h, true, &bin, &n) == 0) {
            uint8_t *copy = malloc(n);
            memcpy(copy, bin, n);
            struct hdr back;
            if (hlog_decode(c, copy, n, &back, NULL, 0) != 0 || back.total_count != h.total_count ||
                memcmp(back.counts, h.counts, h.counts_len * sizeof(int64_t)) != 0)
                abort(); /* a decoded histogram must survive its own round trip */
            hdr_release(&back);
            free(copy);
        }
        hdr_release(&h);
    }
    hlog_codec_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] % 2 == 0)
        fuzz_log(data + 1, size - 1);
    else
        fuzz_binary(data + 1, size - 1);
    return 0;
}
