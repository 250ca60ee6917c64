// Package benchfixture holds the TunnelBenchmark the tests start from: one valid benchmark that
// each test changes in the one way it is about.
package benchfixture

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// New is a valid benchmark against the CloudNativePG cluster "pg": select-only from 4 clients for
// 10 s, one run per transport (tests about repetitions set their own), direct when no transport is
// given.
func New(ns, name string, transports ...benchv1.TransportSpec) *benchv1.TunnelBenchmark {
	if len(transports) == 0 {
		transports = []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}}
	}
	return &benchv1.TunnelBenchmark{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: benchv1.TunnelBenchmarkSpec{
			Server:     benchv1.ServerSpec{CNPG: &benchv1.CNPGServer{ClusterName: "pg"}},
			Transports: transports,
			Load: benchv1.LoadSpec{
				Builtin: "select-only", Clients: 4, Threads: 2, Protocol: "prepared",
				Duration:    &metav1.Duration{Duration: 10 * time.Second},
				Repetitions: 1,
			},
		},
	}
}
