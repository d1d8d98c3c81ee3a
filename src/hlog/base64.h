/* Base64 of RFC 4648 §4 (standard alphabet, '=' padding), the text form every interval of an
 * HdrHistogram log carries its compressed histogram in. Strict decoding: no whitespace, no
 * missing padding, no bits left over in the last quantum (§3.5), so one histogram has
 * exactly one text form. Pure functions; thread-safe. */
#ifndef KNEE_HLOG_BASE64_H
#define KNEE_HLOG_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* Characters base64_encode writes for n input bytes, without the terminating NUL. */
static inline size_t base64_encoded_len(size_t n)
{
    return (n + 2) / 3 * 4;
}

/* Upper bound of the bytes base64_decode writes for len characters. */
static inline size_t base64_decoded_max(size_t len)
{
    return len / 4 * 3;
}

/* Encode n bytes into out, which must hold base64_encoded_len(n) + 1 bytes (NUL-terminated).
 * Returns the characters written (excluding the NUL). */
size_t base64_encode(const uint8_t *in, size_t n, char *out);

/* Decode len characters into out (room for base64_decoded_max(len) bytes). On success
 * returns 0 and stores the byte count in *out_len. Errors: KNEE_EFORMAT for a length that is
 * not a multiple of 4, a character outside the alphabet, padding anywhere but the end, or
 * non-zero bits in the padding; *bad_at (may be NULL) then holds the offending offset. */
int base64_decode(const char *in, size_t len, uint8_t *out, size_t *out_len, size_t *bad_at);

#endif
