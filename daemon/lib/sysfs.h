/* SPDX-License-Identifier: MIT */
/* sysfs: every read of /sys goes through here, relative to a root
 * directory (/sys, or a fixture tree given with --sysfs-root). */
#ifndef TOPDOWND_SYSFS_H
#define TOPDOWND_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sysfs;

int sysfs_new(const char *root, struct sysfs **ret);
void sysfs_free(struct sysfs *sysfs);
const char *sysfs_root(const struct sysfs *sysfs);

/* Reads a small attribute file into @buf (NUL-terminated, trailing
 * whitespace removed).  Returns its length or -errno (-ENOENT if absent,
 * -EFBIG if it does not fit, -ENXIO if not a regular file: a FIFO would
 * block the reader; read_file_strerror() says so). */
int sysfs_read(const struct sysfs *sysfs, const char *path, char *buf, size_t len);
int sysfs_read_int(const struct sysfs *sysfs, const char *path, long *out);
bool sysfs_exists(const struct sysfs *sysfs, const char *path);

/* Calls @fn for each entry name of directory @path (no "." or "..").
 * Stops and returns @fn's value when it is non-zero. */
int sysfs_foreach(const struct sysfs *sysfs, const char *path,
		  int (*fn)(const char *name, void *userdata), void *userdata);

#endif
