/* SPDX-License-Identifier: MIT */
/* sysfs: root-relative attribute reading. */
#include "sysfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sysfs {
	int rootfd;
	char *root;
};

int sysfs_new(const char *root, struct sysfs **ret)
{
	struct sysfs *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->root = strdup(root);
	if (!s->root) {
		free(s);
		return -ENOMEM;
	}
	s->rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->rootfd < 0) {
		int r = -errno;

		sysfs_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void sysfs_free(struct sysfs *sysfs)
{
	if (!sysfs)
		return;
	if (sysfs->rootfd >= 0)
		close(sysfs->rootfd);
	free(sysfs->root);
	free(sysfs);
}

const char *sysfs_root(const struct sysfs *sysfs)
{
	return sysfs->root;
}

int sysfs_read(const struct sysfs *sysfs, const char *path, char *buf, size_t len)
{
	size_t used = 0;
	int fd, r;

	struct stat st;

	if (len == 0)
		return -EINVAL;
	/* Every sysfs attribute is a regular file.  Anything else under the
	 * root (a FIFO in a test or demo tree) is refused at once: opening a
	 * FIFO for reading, or reading it, would wait for a writer, and this
	 * runs on the collection's thread. */
	fd = openat(sysfs->rootfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -ENXIO;
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf + used, len - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto out;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		if (used == len) {
			r = -EFBIG;
			goto out;
		}
	}
	while (used > 0 && (buf[used - 1] == '\n' || buf[used - 1] == ' ' ||
			    buf[used - 1] == '\t' || buf[used - 1] == '\r'))
		used--;
	buf[used] = '\0';
	r = (int)used;
out:
	close(fd);
	return r;
}

int sysfs_read_int(const struct sysfs *sysfs, const char *path, long *out)
{
	char buf[32], *end;
	long v;
	int r;

	r = sysfs_read(sysfs, path, buf, sizeof(buf));
	if (r < 0)
		return r;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

bool sysfs_exists(const struct sysfs *sysfs, const char *path)
{
	return faccessat(sysfs->rootfd, path, F_OK, 0) == 0;
}

int sysfs_foreach(const struct sysfs *sysfs, const char *path,
		  int (*fn)(const char *name, void *userdata), void *userdata)
{
	struct dirent *de;
	DIR *dir;
	int fd, r = 0;

	fd = openat(sysfs->rootfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		r = -errno;
		close(fd);
		return r;
	}
	while ((de = readdir(dir))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		r = fn(de->d_name, userdata);
		if (r)
			break;
	}
	closedir(dir);
	return r;
}
