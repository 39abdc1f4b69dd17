/* SPDX-License-Identifier: MIT */
/* version: filled in by the Makefile (TOPDOWND_VERSION, TOPDOWND_REVISION). */
#include "version.h"

#ifndef TOPDOWND_VERSION
#define TOPDOWND_VERSION "0.0.0"
#endif
#ifndef TOPDOWND_REVISION
#define TOPDOWND_REVISION "unknown"
#endif

const char topdownd_version[] = TOPDOWND_VERSION;
const char topdownd_revision[] = TOPDOWND_REVISION;
