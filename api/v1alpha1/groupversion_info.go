// Package v1alpha1 contains the TunnelBenchmark and ScheduledTunnelBenchmark API of the bench.tunnelbench.io group.
// +kubebuilder:object:generate=true
// +groupName=bench.tunnelbench.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "bench.tunnelbench.io", Version: "v1alpha1"}

	// SchemeBuilder registers the API types with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the API types to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &TunnelBenchmark{}, &TunnelBenchmarkList{},
		&ScheduledTunnelBenchmark{}, &ScheduledTunnelBenchmarkList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
