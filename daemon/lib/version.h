/* SPDX-License-Identifier: MIT */
/* version: the version and source revision this binary was built from. */
#ifndef TOPDOWND_VERSION_H
#define TOPDOWND_VERSION_H

extern const char topdownd_version[];
extern const char topdownd_revision[];

#endif
