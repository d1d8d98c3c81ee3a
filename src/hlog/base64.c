/* RFC 4648 base64, standard alphabet with padding: the encoding of the histogram column of
 * .hlog files (Java's Base64Helper produces exactly this form). */
#include "hlog/base64.h"

#include "core/err.h"

static const char alphabet[65] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encode(const uint8_t *in, size_t n, char *out)
{
    size_t o = 0, i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = alphabet[v >> 18];
        out[o++] = alphabet[v >> 12 & 63];
        out[o++] = alphabet[v >> 6 & 63];
        out[o++] = alphabet[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        out[o++] = alphabet[v >> 18];
        out[o++] = alphabet[v >> 12 & 63];
        out[o++] = '=';
        out[o++] = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        out[o++] = alphabet[v >> 18];
        out[o++] = alphabet[v >> 12 & 63];
        out[o++] = alphabet[v >> 6 & 63];
        out[o++] = '=';
    }
    out[o] = '\0';
    return o;
}

/* 0..63 for alphabet characters, -1 otherwise (including '='). */
static int sextet(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

static int fail(size_t at, size_t *bad_at)
{
    if (bad_at)
        *bad_at = at;
    return KNEE_EFORMAT;
}

int base64_decode(const char *in, size_t len, uint8_t *out, size_t *out_len, size_t *bad_at)
{
    if (len % 4 != 0)
        return fail(len, bad_at);
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        int s[4];
        size_t pad = 0;
        for (size_t k = 0; k < 4; k++) {
            unsigned char c = (unsigned char)in[i + k];
            if (c == '=' && i + 4 == len && k >= 2) {
                /* '=' only in the last quantum, and once it starts only '=' may follow */
                s[k] = 0;
                pad++;
                continue;
            }
            s[k] = sextet(c);
            if (s[k] < 0 || pad)
                return fail(i + k, bad_at);
        }
        uint32_t v = (uint32_t)s[0] << 18 | (uint32_t)s[1] << 12 | (uint32_t)s[2] << 6 | (uint32_t)s[3];
        /* §3.5: the bits a padded quantum does not carry must be zero */
        if ((pad == 1 && (v & 0xff)) || (pad == 2 && (v & 0xffff)))
            return fail(i + 4 - pad - 1, bad_at);
        out[o++] = (uint8_t)(v >> 16);
        if (pad < 2)
            out[o++] = (uint8_t)(v >> 8);
        if (pad < 1)
            out[o++] = (uint8_t)v;
    }
    *out_len = o;
    return 0;
}
