package chart

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// historyEnv is the operator container's history store variable, or nil.
func historyEnv(t *testing.T, set ...string) *corev1.EnvVar {
	t.Helper()
	dep := &appsv1.Deployment{}
	convert(t, find(render(t, set...), "Deployment", "tb-tunnelbench"), dep)
	for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "TUNNELBENCH_HISTORY_URI" {
			return &e
		}
	}
	return nil
}

// TestHistoryStore: off by default; on, the chart makes a CloudNativePG Cluster whose app Secret
// the operator reads, or reads the Secret named, and refuses neither.
func TestHistoryStore(t *testing.T) {
	needsHelm(t)
	if historyEnv(t) != nil || find(render(t), "Cluster", "") != nil {
		t.Error("a history store without history.enabled")
	}
	objs := render(t, "history.enabled=true", "history.cluster.storageSize=2Gi")
	cluster := find(objs, "Cluster", "tb-tunnelbench-history")
	if cluster == nil || unstructuredString(cluster.Object, "spec", "storage", "size") != "2Gi" ||
		unstructuredString(cluster.Object, "spec", "bootstrap", "initdb", "owner") != "tunnelbench" {
		t.Fatalf("the store's Cluster: %v", cluster)
	}
	if e := historyEnv(t, "history.enabled=true"); e == nil || e.ValueFrom.SecretKeyRef.Name != "tb-tunnelbench-history-app" ||
		e.ValueFrom.SecretKeyRef.Key != "uri" {
		t.Errorf("the operator's store: %+v", e)
	}
	if e := historyEnv(t, "history.enabled=true", "history.cluster.create=false", "history.secretName=store"); e == nil ||
		e.ValueFrom.SecretKeyRef.Name != "store" {
		t.Errorf("an existing store's Secret: %+v", e)
	}
	out, err := helm(t, "template", "tb", chartDir, "--set", "history.enabled=true", "--set", "history.cluster.create=false")
	if err == nil || !strings.Contains(out+err.Error(), "history.cluster.create or history.secretName") {
		t.Errorf("no store named: %v\n%s", err, out)
	}
}
