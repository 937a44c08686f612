/*
 * util/uuid.c: random (version 4) UUIDs from the kernel's randomness (util.h).
 */
#include <errno.h>
#include <sys/random.h>

#include "util/util.h"

int icm__uuid4(char out[37])
{
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return icm__error_set_errno(ICM_ERRCLASS_OS, ICM_EIO, errno, NULL,
                                        "cannot get random bytes for a UUID");
        }
        got += (size_t)n;
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < sizeof b; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 0x0f];
    }
    out[o] = '\0';
    return 0;
}
