/* util: small string helpers shared by every module. */
#ifndef TOPDOWND_UTIL_H
#define TOPDOWND_UTIL_H

#include <stddef.h>

/* snprintf for messages into fixed buffers, where cutting a long message
 * short is the intended behaviour.  Always NUL-terminates. */
void str_printf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
