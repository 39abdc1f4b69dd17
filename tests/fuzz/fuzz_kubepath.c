/* SPDX-License-Identifier: MIT */
/* kube_parse over arbitrary cgroup paths.  Invariants: a pod's UID is the
 * API's form (8-4-4-4-12 lowercase hex) or a static pod's 32 hex digits,
 * and its digits are in the path, with '-' or the systemd driver's '_';
 * a container ID is "" or 64 lowercase hex digits that are in the path;
 * the QoS class is one of the API's three; the path has a kubepods level;
 * no pod: every field empty; the same path always gives the same answer,
 * with or without its leading '/'. */
#include <errno.h>

#include "fuzz_common.h"
#include "kubepath.h"

static bool hex_only(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

FUZZ_NO_COVERAGE static void check_uid(const char *path, const char *uid)
{
	size_t n = strlen(uid);
	char sd[KUBE_UID_MAX];

	if (n == 32) {
		FUZZ_CHECK(hex_only(uid, n), "static pod UID \"%s\" is not hex", uid);
		FUZZ_CHECK(strstr(path, uid), "UID %s is not in %s", uid, path);
		return;
	}
	FUZZ_CHECK(n == 36, "UID \"%s\" of %zu characters", uid, n);
	for (size_t i = 0; i < n; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		FUZZ_CHECK(dash ? uid[i] == '-' : hex_only(uid + i, 1), "UID \"%s\" at %zu", uid, i);
		sd[i] = dash ? '_' : uid[i];
	}
	sd[n] = '\0';
	FUZZ_CHECK(strstr(path, uid) || strstr(path, sd), "UID %s is not in %s", uid, path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path = fuzz_cstr(data, size);
	struct kube_id k, again;
	int r = kube_parse(path, &k);

	FUZZ_CHECK(r == 0 || r == -ENOENT, "kube_parse returned %d", r);
	FUZZ_CHECK(kube_parse(path, &again) == r && memcmp(&k, &again, sizeof(k)) == 0,
		   "a second parse of %s differs", path);
	if (path[0] == '/')
		FUZZ_CHECK(kube_parse(path + 1, &again) == r && memcmp(&k, &again, sizeof(k)) == 0,
			   "%s without its '/' parses otherwise", path);
	if (r < 0) {
		FUZZ_CHECK(!k.pod_uid[0] && !k.container_id[0] && !k.qos_class,
			   "no pod in %s, yet fields set", path);
		goto out;
	}
	FUZZ_CHECK(strstr(path, "kubepods"), "a pod without a kubepods level: %s", path);
	check_uid(path, k.pod_uid);
	FUZZ_CHECK(k.qos_class && (strcmp(k.qos_class, "Guaranteed") == 0 ||
				   strcmp(k.qos_class, "Burstable") == 0 ||
				   strcmp(k.qos_class, "BestEffort") == 0),
		   "QoS class %s of %s", k.qos_class ? k.qos_class : "NULL", path);
	if (k.container_id[0]) {
		FUZZ_CHECK(strlen(k.container_id) == 64 && hex_only(k.container_id, 64),
			   "container ID \"%s\"", k.container_id);
		FUZZ_CHECK(strstr(path, k.container_id), "container %s is not in %s", k.container_id,
			   path);
	}
out:
	free(path);
	return 0;
}
