package chart

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// historySecret is the Secret the operator's history volume holds and whether the operator
// reads it (--history-uri-file), or nil.
func historySecret(t *testing.T, set ...string) *corev1.SecretVolumeSource {
	t.Helper()
	dep := &appsv1.Deployment{}
	convert(t, find(render(t, set...), "Deployment", "tb-tunnelbench"), dep)
	pod := dep.Spec.Template.Spec
	if !slices.Contains(pod.Containers[0].Args, "--history-uri-file=/etc/tunnelbench/history/uri") {
		return nil
	}
	for _, v := range pod.Volumes {
		if v.Name == "history" {
			return v.Secret
		}
	}
	return nil
}

// TestHistoryStore: off by default; on, the chart makes a CloudNativePG Cluster whose app Secret
// the operator reads, or reads the Secret named, and refuses neither.
func TestHistoryStore(t *testing.T) {
	needsHelm(t)
	if historySecret(t) != nil || find(render(t), "Cluster", "") != nil {
		t.Error("a history store without history.enabled")
	}
	objs := render(t, "history.enabled=true", "history.cluster.storageSize=2Gi")
	cluster := find(objs, "Cluster", "tb-tunnelbench-history")
	if cluster == nil || unstructuredString(cluster.Object, "spec", "storage", "size") != "2Gi" ||
		unstructuredString(cluster.Object, "spec", "bootstrap", "initdb", "owner") != "tunnelbench" {
		t.Fatalf("the store's Cluster: %v", cluster)
	}
	// Optional: the operator starts before CloudNativePG made the Secret.
	if v := historySecret(t, "history.enabled=true"); v == nil || v.SecretName != "tb-tunnelbench-history-app" ||
		v.Optional == nil || !*v.Optional || len(v.Items) != 1 || v.Items[0].Key != "uri" {
		t.Errorf("the operator's store: %+v", v)
	}
	if v := historySecret(t, "history.enabled=true", "history.cluster.create=false", "history.secretName=store"); v == nil ||
		v.SecretName != "store" {
		t.Errorf("an existing store's Secret: %+v", v)
	}
	out, err := helm(t, "template", "tb", chartDir, "--set", "history.enabled=true", "--set", "history.cluster.create=false")
	if err == nil || !strings.Contains(out+err.Error(), "history.cluster.create or history.secretName") {
		t.Errorf("no store named: %v\n%s", err, out)
	}
}
