/* util: string helpers. */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>

void str_printf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}
