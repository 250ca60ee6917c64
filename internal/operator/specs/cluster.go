package specs

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// CNPGClusterGVK is CloudNativePG's Cluster kind, handled as unstructured data like the Pooler.
var CNPGClusterGVK = schema.GroupVersionKind{Group: "postgresql.cnpg.io", Version: "v1", Kind: "Cluster"}

// ManagedCluster is the CloudNativePG Cluster of spec.server.managed, owned by the benchmark.
// defaultImage is the operator's PostgreSQL image, used when the spec names none.
func ManagedCluster(tb *benchv1.TunnelBenchmark, defaultImage string) *unstructured.Unstructured {
	m := tb.Spec.Server.Managed
	image := m.ImageName
	if image == "" {
		image = defaultImage
	}
	size := benchv1.DefaultStorageSize
	if m.StorageSize != nil {
		size = m.StorageSize.String()
	}
	storage := map[string]any{"size": size}
	if m.StorageClass != "" {
		storage["storageClass"] = m.StorageClass
	}
	spec := map[string]any{
		"instances": int64(max(m.Instances, benchv1.DefaultInstances)),
		"storage":   storage,
		"bootstrap": map[string]any{"initdb": map[string]any{"database": benchv1.DefaultDatabase, "owner": benchv1.DefaultDatabase}},
	}
	if image != "" {
		spec["imageName"] = image
	}
	if tb.Spec.TLS != nil {
		// The issuer's certificate, and its CA to verify it, replace CloudNativePG's own.
		secret := ManagedServerCertificateName(tb)
		spec["certificates"] = map[string]any{"serverTLSSecret": secret, "serverCASecret": secret}
	}
	if len(m.Parameters) > 0 {
		params := map[string]any{}
		for k, v := range m.Parameters {
			params[k] = v
		}
		spec["postgresql"] = map[string]any{"parameters": params}
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(CNPGClusterGVK)
	SetMeta(u, OwnedMeta(tb, tb.ManagedClusterName(), ServerComponent, ""))
	return u
}

// ClusterReady reads a CloudNativePG Cluster's status: ready when its Ready condition is True, or
// (older releases) when every instance is ready in the healthy phase. It returns a description of
// the state for messages.
func ClusterReady(c *unstructured.Unstructured) (bool, string) {
	phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
	ready, _, _ := unstructured.NestedInt64(c.Object, "status", "readyInstances")
	want, _, _ := unstructured.NestedInt64(c.Object, "spec", "instances")
	conditions, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
	for _, raw := range conditions {
		if cond, ok := raw.(map[string]any); ok && cond["type"] == "Ready" && cond["status"] == "True" {
			return true, phase
		}
	}
	state := phase
	if state == "" {
		state = "no status yet"
	}
	state += ", " + strconv.FormatInt(ready, 10) + "/" + strconv.FormatInt(max(want, 1), 10) + " instances ready"
	return phase == "Cluster in healthy state" && want > 0 && ready >= want, state
}
