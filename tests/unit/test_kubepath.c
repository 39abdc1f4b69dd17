/* SPDX-License-Identifier: MIT */
/* Unit tests of kube_parse on the cgroup paths the kubelet and the
 * container runtimes make, with both cgroup drivers (pod UIDs and
 * container IDs of the shapes a cluster shows), and on paths that are no
 * pod's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cgroups.h"
#include "config.h"
#include "kubepath.h"

#define UID "0b7a3c1e-5d2f-4e8a-9c6b-1f2e3d4c5b6a"
#define UID_SD "0b7a3c1e_5d2f_4e8a_9c6b_1f2e3d4c5b6a"
#define CID "3f9c2a7b8e1d4c6f5a0b9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b"

static void is_pod(const char *path, const char *uid, const char *container, const char *qos)
{
	struct kube_id k;
	int r = kube_parse(path, &k);

	if (r != 0)
		fail_msg("%s: %d, expected a pod", path, r);
	assert_string_equal(k.pod_uid, uid);
	assert_string_equal(k.container_id, container);
	assert_string_equal(k.qos_class, qos);
}

static void not_pod(const char *path)
{
	struct kube_id k;
	int r = kube_parse(path, &k);

	if (r != -ENOENT)
		fail_msg("%s: %d (uid \"%s\"), expected -ENOENT", path, r, k.pod_uid);
	assert_string_equal(k.pod_uid, "");
	assert_null(k.qos_class);
}

static void test_systemd_driver(void **state)
{
	(void)state;
	is_pod("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_SD ".slice",
	       UID, "", "Burstable");
	is_pod("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_SD
	       ".slice/cri-containerd-" CID ".scope", UID, CID, "Burstable");
	is_pod("kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_SD
	       ".slice/crio-" CID ".scope", UID, CID, "BestEffort");
	is_pod("/kubepods.slice/kubepods-pod" UID_SD ".slice/docker-" CID ".scope", UID, CID,
	       "Guaranteed");
	is_pod("/kubepods.slice/kubepods-pod" UID_SD ".slice", UID, "", "Guaranteed");
	/* kind and other nested kubelets: the kubepods level further down. */
	is_pod("/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	       "kubelet-kubepods-besteffort-pod" UID_SD ".slice/cri-containerd-" CID ".scope",
	       UID, CID, "BestEffort");
	/* Below a container: the container's. */
	is_pod("/kubepods.slice/kubepods-pod" UID_SD ".slice/cri-containerd-" CID ".scope/init",
	       UID, CID, "Guaranteed");
	/* The runtime's own cgroup in the pod: the pod's, no container. */
	is_pod("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_SD
	       ".slice/crio-conmon-" CID ".scope", UID, "", "Burstable");
	/* A static pod: its UID is its manifest's hash, 32 hex digits. */
	is_pod("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	       "6e4b1f0c2d3a49587f6e5d4c3b2a1908.slice", "6e4b1f0c2d3a49587f6e5d4c3b2a1908", "",
	       "Burstable");
}

static void test_cgroupfs_driver(void **state)
{
	(void)state;
	is_pod("/kubepods/burstable/pod" UID "/" CID, UID, CID, "Burstable");
	is_pod("/kubepods/besteffort/pod" UID, UID, "", "BestEffort");
	is_pod("/kubepods/pod" UID "/" CID, UID, CID, "Guaranteed");
	is_pod("kubepods/pod" UID, UID, "", "Guaranteed");
	is_pod("/kubepods/burstable/pod" UID "/crio-" CID, UID, CID, "Burstable");
	/* Nested under another hierarchy (a kubelet in a container). */
	is_pod("/docker/abc/kubepods/besteffort/pod" UID "/" CID, UID, CID, "BestEffort");
}

static void test_not_pods(void **state)
{
	(void)state;
	not_pod("");
	not_pod("/");
	not_pod("/system.slice/nginx.service");
	not_pod("/kubepods.slice");
	not_pod("/kubepods.slice/kubepods-burstable.slice");
	not_pod("/kubepods/burstable");
	not_pod("/kubepods");
	/* A QoS class the kubelet does not make. */
	not_pod("/kubepods.slice/kubepods-platinum.slice/kubepods-platinum-pod" UID_SD ".slice");
	not_pod("/kubepods/platinum/pod" UID);
	/* Malformed UIDs: short, upper case, dashes misplaced, not hex. */
	not_pod("/kubepods/pod0b7a3c1e-5d2f-4e8a-9c6b-1f2e3d4c5b6");
	not_pod("/kubepods/pod0B7A3C1E-5D2F-4E8A-9C6B-1F2E3D4C5B6A");
	not_pod("/kubepods/pod0b7a3c1e5-d2f-4e8a-9c6b-1f2e3d4c5b6a");
	not_pod("/kubepods/pod0b7a3c1e-5d2f-4e8a-9c6b-1f2e3d4c5b6z");
	/* Each driver writes the UID one way: '-' (cgroupfs), '_' (systemd). */
	not_pod("/kubepods/pod" UID_SD);
	not_pod("/kubepods/pod0b7a3c1e-5d2f-4e8a_9c6b-1f2e3d4c5b6a");
	not_pod("/kubepods.slice/kubepods-pod" UID ".slice");
	not_pod("/kubepods.slice/kubepods-pod.slice");
	/* A QoS slice of another base, and a pod slice of the wrong QoS. */
	not_pod("/kubepods.slice/other-burstable.slice/other-burstable-pod" UID_SD ".slice");
	not_pod("/kubepods.slice/kubepods-burstable.slice/kubepods-besteffort-pod" UID_SD ".slice");
	/* "kubepods" inside a name is not the level. */
	not_pod("/mykubepods.slice/mykubepods-pod" UID_SD ".slice");
	not_pod("/notkubepods/pod" UID);
}

static void test_containers(void **state)
{
	(void)state;
	/* An ID of another length or not hex: the pod's, no container. */
	is_pod("/kubepods/pod" UID "/" CID "0", UID, "", "Guaranteed");
	is_pod("/kubepods/pod" UID "/cri-containerd-" "ABCDEF" ".scope", UID, "", "Guaranteed");
	is_pod("/kubepods.slice/kubepods-pod" UID_SD ".slice/podman-" CID ".scope", UID, "",
	       "Guaranteed");
	/* Repeated and trailing slashes are no components. */
	is_pod("//kubepods//burstable//pod" UID "//" CID "/", UID, CID, "Burstable");
}

/* [cgroups] track's presets (lib/config.c, where the configuration
 * language expands them, so that a bad one fails --check-config and a
 * reload) against what kube_parse says of the same paths: @pods tracks
 * exactly the pods' own cgroups, @containers exactly the containers', with
 * either cgroup driver and every QoS class, as the tracker matches them. */
static bool tracked(const char *preset, const char *path)
{
	struct config cfg;
	char err[256], warn[256];
	const char *globs[CONFIG_TRACK_MAX];

	config_defaults(&cfg);
	assert_int_equal(config_set(&cfg, "cgroups", "track", preset, err, sizeof(err), warn, sizeof(warn)), 0);
	for (unsigned i = 0; i < cfg.n_cgroups_track; i++)
		globs[i] = cfg.cgroups_track[i];
	return cgroups_match(globs, cfg.n_cgroups_track, path);
}

static void test_presets(void **state)
{
	static const struct {
		const char *path;
		int level; /* 1: a pod's own cgroup, 2: a container's, 0: neither */
	} paths[] = {
		{ "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_SD ".slice", 1 },
		{ "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_SD ".slice", 1 },
		{ "kubepods.slice/kubepods-pod" UID_SD ".slice", 1 },
		{ "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_SD
		  ".slice/cri-containerd-" CID ".scope", 2 },
		{ "kubepods.slice/kubepods-pod" UID_SD ".slice/crio-" CID ".scope", 2 },
		{ "kubepods/burstable/pod" UID, 1 },
		{ "kubepods/besteffort/pod" UID, 1 },
		{ "kubepods/pod" UID, 1 },
		{ "kubepods/burstable/pod" UID "/" CID, 2 },
		{ "kubepods/pod" UID "/" CID, 2 },
		/* The QoS levels, the root, other services. */
		{ "kubepods.slice", 0 },
		{ "kubepods.slice/kubepods-burstable.slice", 0 },
		{ "kubepods/besteffort", 0 },
		{ "system.slice/kubelet.service", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct kube_id k;
		int r = kube_parse(paths[i].path, &k);
		int level = r < 0 ? 0 : k.container_id[0] ? 2 : 1;

		if (level != paths[i].level)
			fail_msg("%s: kube_parse says level %d, the table %d", paths[i].path, level, paths[i].level);
		if (tracked("@pods", paths[i].path) != (level == 1))
			fail_msg("%s: @pods %s it", paths[i].path, level == 1 ? "misses" : "tracks");
		if (tracked("@containers", paths[i].path) != (level == 2))
			fail_msg("%s: @containers %s it", paths[i].path, level == 2 ? "misses" : "tracks");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_systemd_driver),
		cmocka_unit_test(test_cgroupfs_driver),
		cmocka_unit_test(test_not_pods),
		cmocka_unit_test(test_containers),
		cmocka_unit_test(test_presets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
