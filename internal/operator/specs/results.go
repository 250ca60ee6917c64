package specs

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// ResultComponent labels the result ConfigMaps, RunnerAccessComponent the runner's API access.
const (
	ResultComponent       = "result"
	RunnerAccessComponent = "runner-access"
)

// The channel of results: the runner of each run stores its whole report (histogram and progress
// included, which the 4 KiB termination message cannot hold) in a ConfigMap the operator created
// for that run. The ConfigMap belongs to the benchmark, not to the Job or pod, so it outlives
// both; the operator copies what status needs and keeps the ConfigMaps as the raw record until
// the benchmark is deleted.

// ResultConfigMap is the empty ConfigMap a run's runner fills; it is named after the run's Job.
func ResultConfigMap(tb *benchv1.TunnelBenchmark, ref benchv1.RunRef) *corev1.ConfigMap {
	meta := OwnedMeta(tb, JobName(tb, ref), ResultComponent, ref.Transport)
	runLabels(tb, ref, meta.Labels)
	return &corev1.ConfigMap{ObjectMeta: meta}
}

// RunnerAccess is the runner's least privilege on the API: a ServiceAccount whose Role allows get
// and patch on the benchmark's result ConfigMaps, by name, and nothing else.
func RunnerAccess(tb *benchv1.TunnelBenchmark) []client.Object {
	name := tb.RunnerAccountName()
	var results []string
	for point := range tb.Points() {
		for _, t := range tb.Spec.Transports {
			for round := int32(1); round <= tb.Repetitions(); round++ {
				results = append(results, tb.RunJobName(benchv1.RunRef{Transport: t.Name, Point: point, Round: round}))
			}
		}
	}
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: OwnedMeta(tb, name, RunnerAccessComponent, ""),
			AutomountServiceAccountToken: ptr.To(false)},
		&rbacv1.Role{ObjectMeta: OwnedMeta(tb, name, RunnerAccessComponent, ""), Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "patch"},
			ResourceNames: results,
		}}},
		&rbacv1.RoleBinding{ObjectMeta: OwnedMeta(tb, name, RunnerAccessComponent, ""),
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: tb.Namespace}}},
	}
}

// apiAccess is the runner container's API credentials: what automounting would give every
// container of the pod, given to the runner alone (the tunnels and poolers beside it get none).
// The kubelet renews the token before it expires.
func apiAccess() (corev1.Volume, corev1.VolumeMount) {
	v := corev1.Volume{Name: runspec.APIAccessVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](0o444),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}
	return v, corev1.VolumeMount{Name: runspec.APIAccessVolume, MountPath: runspec.APIAccessPath, ReadOnly: true}
}
