/* SPDX-License-Identifier: MIT */
/* kubepath: a cgroup path's pod and container (see kubepath.h). */
#include "kubepath.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* One component of a path: [s, s + len). */
struct comp {
	const char *s;
	size_t len;
};

#define COMPS_MAX 32

static unsigned split(const char *path, struct comp *out)
{
	unsigned n = 0;

	while (*path && n < COMPS_MAX) {
		size_t len = strcspn(path, "/");

		if (len)
			out[n++] = (struct comp){ path, len };
		path += len;
		path += strspn(path, "/");
	}
	return n;
}

static bool ends_with(struct comp c, const char *suffix)
{
	size_t n = strlen(suffix);

	return c.len >= n && memcmp(c.s + c.len - n, suffix, n) == 0;
}

static bool equals(struct comp c, const char *s)
{
	return c.len == strlen(s) && memcmp(c.s, s, c.len) == 0;
}

static bool is_hex(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* A pod UID as the API shows it: 8-4-4-4-12 lowercase hex digits, @sep
 * between the groups ('-', or the systemd driver's '_', undone), or a
 * static pod's 32 hex digits (pkg/kubelet/config: the hash of its
 * manifest). */
static bool take_uid(const char *s, size_t len, char sep, char *out)
{
	static const size_t dash[] = { 8, 13, 18, 23 };

	if (len == 32 && is_hex(s, len)) {
		memcpy(out, s, len);
		out[len] = '\0';
		return true;
	}
	if (len != KUBE_UID_MAX - 1)
		return false;
	for (size_t i = 0, d = 0; i < len; i++) {
		if (d < 4 && i == dash[d]) {
			if (s[i] != sep)
				return false;
			out[i] = '-';
			d++;
		} else if (!is_hex(s + i, 1)) {
			return false;
		} else {
			out[i] = s[i];
		}
	}
	out[len] = '\0';
	return true;
}

/* The QoS level's name ("burstable") as the API's class. */
static const char *qos_of(const char *s, size_t len)
{
	if (len == 9 && memcmp(s, "burstable", 9) == 0)
		return "Burstable";
	if (len == 10 && memcmp(s, "besteffort", 10) == 0)
		return "BestEffort";
	return NULL;
}

/* A container's cgroup as the runtimes name it: [cri-containerd-|crio-|
 * docker-]<64 hex>[.scope]. */
static bool take_container(struct comp c, char *out)
{
	static const char *const prefixes[] = { "cri-containerd-", "crio-", "docker-", "" };
	const char *s = c.s;
	size_t len = c.len;

	if (ends_with(c, ".scope"))
		len -= strlen(".scope");
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t p = strlen(prefixes[i]);

		if (len == p + KUBE_CONTAINER_MAX - 1 && memcmp(s, prefixes[i], p) == 0 &&
		    is_hex(s + p, len - p)) {
			memcpy(out, s + p, len - p);
			out[len - p] = '\0';
			return true;
		}
	}
	return false;
}

/* The length of a "<stem>.slice" component without its suffix. */
static size_t slice_stem(struct comp c)
{
	return c.len - (sizeof(".slice") - 1);
}

/* systemd driver: @kp is "<base>.slice" (base "kubepods", or
 * "kubelet-kubepods" nested); the pod is "<base>-pod<uid>.slice" right
 * under it, or "<base>-<qos>-pod<uid>.slice" under "<base>-<qos>.slice".
 * Returns the pod's component index, or 0. */
static unsigned pod_systemd(const struct comp *c, unsigned n, unsigned kp, struct kube_id *out)
{
	size_t base = slice_stem(c[kp]), parent;
	struct comp pod;
	const char *qos = "Guaranteed", *rest;
	size_t rest_len;
	unsigned at = kp + 1;

	if (at >= n || !ends_with(c[at], ".slice") || c[at].len <= base + 1 ||
	    memcmp(c[at].s, c[kp].s, base) != 0 || c[at].s[base] != '-')
		return 0;
	rest = c[at].s + base + 1;
	rest_len = slice_stem(c[at]) - base - 1;
	if (!(rest_len > 3 && memcmp(rest, "pod", 3) == 0)) {
		/* A QoS level: "<base>-<qos>.slice", its pods one further. */
		qos = qos_of(rest, rest_len);
		if (!qos || ++at >= n)
			return 0;
		parent = slice_stem(c[at - 1]);
		if (c[at].len <= c[at - 1].len || !ends_with(c[at], ".slice") ||
		    memcmp(c[at].s, c[at - 1].s, parent) != 0)
			return 0;
		rest = c[at].s + parent;
		rest_len = slice_stem(c[at]) - parent;
		if (!(rest_len > 4 && memcmp(rest, "-pod", 4) == 0))
			return 0;
		rest++;
		rest_len--;
	}
	pod = (struct comp){ rest + 3, rest_len - 3 };
	if (!take_uid(pod.s, pod.len, '_', out->pod_uid))
		return 0;
	out->qos_class = qos;
	return at;
}

/* cgroupfs driver: "kubepods/[<qos>/]pod<uid>".  The pod's index, or 0. */
static unsigned pod_cgroupfs(const struct comp *c, unsigned n, unsigned kp, struct kube_id *out)
{
	const char *qos = "Guaranteed";
	unsigned at = kp + 1;

	if (at < n && !(c[at].len > 3 && memcmp(c[at].s, "pod", 3) == 0)) {
		qos = qos_of(c[at].s, c[at].len);
		if (!qos)
			return 0;
		at++;
	}
	if (at >= n || !(c[at].len > 3 && memcmp(c[at].s, "pod", 3) == 0) ||
	    !take_uid(c[at].s + 3, c[at].len - 3, '-', out->pod_uid))
		return 0;
	out->qos_class = qos;
	return at;
}

int kube_parse(const char *path, struct kube_id *out)
{
	struct comp c[COMPS_MAX];
	unsigned n = split(path, c);

	memset(out, 0, sizeof(*out));
	for (unsigned kp = 0; kp < n; kp++) {
		unsigned pod = 0;

		if (equals(c[kp], "kubepods"))
			pod = pod_cgroupfs(c, n, kp, out);
		else if (ends_with(c[kp], "kubepods.slice") &&
			 (c[kp].len == strlen("kubepods.slice") ||
			  c[kp].s[c[kp].len - strlen("kubepods.slice") - 1] == '-'))
			pod = pod_systemd(c, n, kp, out);
		if (!pod)
			continue;
		if (pod + 1 < n && !take_container(c[pod + 1], out->container_id))
			out->container_id[0] = '\0';
		return 0;
	}
	memset(out, 0, sizeof(*out));
	return -ENOENT;
}
