/* SPDX-License-Identifier: MIT */
/* kubepath: which Kubernetes pod and container a cgroup belongs to, from
 * the path the kubelet gave it.  A pure function, for the per-cgroup
 * series' pod_uid, container_id and qos_class labels (the ones
 * kube-state-metrics' kube_pod_info and cAdvisor's series join on).
 *
 * The kubelet names the cgroups after the pod's QoS class and UID, with
 * either cgroup driver (pkg/kubelet/cm: cgroup_manager_linux.go, the
 * systemd driver escaping the UID's '-' as '_'), and the container
 * runtime names the container's:
 *
 *   systemd:  kubepods.slice/kubepods-burstable.slice/
 *               kubepods-burstable-pod<uid>.slice/cri-containerd-<id>.scope
 *             (Guaranteed pods directly under kubepods.slice as
 *             kubepods-pod<uid>.slice; crio-<id>.scope, docker-<id>.scope)
 *   cgroupfs: kubepods/besteffort/pod<uid>/<id>   (Guaranteed: kubepods/pod<uid>)
 *
 * The kubepods level may sit anywhere in the tree (kind and other nested
 * setups put it under kubelet.slice/kubelet-kubepods.slice). */
#ifndef TOPDOWND_KUBEPATH_H
#define TOPDOWND_KUBEPATH_H

#define KUBE_UID_MAX 37       /* "8-4-4-4-12" hex and its NUL */
#define KUBE_CONTAINER_MAX 65 /* 64 hex digits and its NUL */

struct kube_id {
	/* The pod's UID as the API shows it ("3f1a...-...."), or a static
	 * pod's 32 hex digits. */
	char pod_uid[KUBE_UID_MAX];
	/* The container's runtime ID, "" for the pod's own cgroup. */
	char container_id[KUBE_CONTAINER_MAX];
	/* "Guaranteed", "Burstable" or "BestEffort", as the API spells it. */
	const char *qos_class;
};

/* The pod (and container) of cgroup @path ("/kubepods.slice/...", with
 * or without its leading '/').  A path below a container's cgroup is that
 * container's; a child of the pod's that is no container's (the runtime's
 * own, such as crio-conmon-<id>.scope) has the pod's identity and no
 * container_id.  0, or -ENOENT when @path is no pod's: no kubepods level,
 * the QoS levels themselves, a pod level whose UID is malformed. */
int kube_parse(const char *path, struct kube_id *out);

#endif
