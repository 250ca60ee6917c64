package benchmark

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

func TestServiceOf(t *testing.T) {
	tests := []struct {
		host, want string
		ok         bool
	}{
		{"pg-rw", "pg-rw", true},
		{"pg-rw.db", "pg-rw", true},
		{"pg-rw.db.svc", "pg-rw", true},
		{"pg-rw.db.svc.cluster.local", "pg-rw", true},
		{"pg-rw.other.svc", "", false},
		{"db.example.com", "", false},
		{"10.0.0.5", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		if got, ok := serviceOf(tt.host, "db"); got != tt.want || ok != tt.ok {
			t.Errorf("serviceOf(%q) = %q, %v; want %q, %v", tt.host, got, ok, tt.want, tt.ok)
		}
	}
}

// slice is an EndpointSlice of Service pg-rw with the given ports and endpoints (address → ready).
func slice(name string, ports map[string]int32, endpoints ...discoveryv1.Endpoint) discoveryv1.EndpointSlice {
	meta := metav1.ObjectMeta{Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: "pg-rw"}}
	sl := discoveryv1.EndpointSlice{ObjectMeta: meta,
		AddressType: discoveryv1.AddressTypeIPv4, Endpoints: endpoints}
	for n, p := range ports {
		sl.Ports = append(sl.Ports, discoveryv1.EndpointPort{Name: ptr.To(n), Port: ptr.To(p), Protocol: ptr.To(corev1.ProtocolTCP)})
	}
	return sl
}

func endpoint(ip, pod string, ready bool) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)},
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: pod}}
}

func TestPickServerPod(t *testing.T) {
	tests := []struct {
		name    string
		slices  []discoveryv1.EndpointSlice
		want    transport.ServerPod
		problem string
	}{
		{"the ready pod", []discoveryv1.EndpointSlice{slice("a", map[string]int32{"postgres": 5432},
			endpoint("10.88.0.4", "pg-2", false), endpoint("10.88.0.5", "pg-1", true))},
			transport.ServerPod{Name: "pg-1", IP: "10.88.0.5", Port: 5432}, ""},
		{"the postgres port among several", []discoveryv1.EndpointSlice{slice("a", map[string]int32{"metrics": 9187, "postgres": 6543},
			endpoint("10.88.0.5", "pg-1", true))}, transport.ServerPod{Name: "pg-1", IP: "10.88.0.5", Port: 6543}, ""},
		{"no Service", nil, transport.ServerPod{}, "it has no EndpointSlice (no such Service, or no selector)"},
		{"no ready pod", []discoveryv1.EndpointSlice{slice("a", map[string]int32{"postgres": 5432}, endpoint("10.88.0.4", "pg-2", false))},
			transport.ServerPod{}, "none of its pods is ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problem := pickServerPod(tt.slices, 5432)
			if got != tt.want || problem != tt.problem {
				t.Errorf("pickServerPod = %+v, %q; want %+v, %q", got, problem, tt.want, tt.problem)
			}
		})
	}
}

// TestDirectViaPod: a direct transport via pod connects to the ready pod behind the server's
// Service, as its EndpointSlice lists it, and the other one to the Service.
func TestDirectViaPod(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	createCNPGSecrets(t, ns)
	startOperator(t)
	ctx := context.Background()
	sl := slice("pg-rw-abcde", map[string]int32{"postgres": 5432}, endpoint("10.88.0.5", "pg-1", true))
	sl.Namespace = ns
	if err := testClient.Create(ctx, &sl); err != nil {
		t.Fatal(err)
	}
	tb := newBenchmark(ns, "via",
		benchv1.TransportSpec{Name: "pod", Type: benchv1.TransportDirect, Direct: &benchv1.DirectTransport{Via: benchv1.ViaPod}},
		benchv1.TransportSpec{Name: "service", Type: benchv1.TransportDirect})
	if err := testClient.Create(ctx, inSpecOrder(tb)); err != nil {
		t.Fatal(err)
	}
	pod := waitForJob(t, ns, jobName("via", "pod"))
	assertEnv(t, pod, "PGHOST", "10.88.0.5")
	assertEnv(t, pod, "PGPORT", "5432")
	finishJob(t, pod, 0, resultReport(1000, nil))
	service := waitForJob(t, ns, jobName("via", "service"))
	assertEnv(t, service, "PGHOST", "pg-rw")
	finishJob(t, service, 0, resultReport(900, nil))
	done := waitForPhase(t, ns, "via", benchv1.PhaseCompleted)
	if r := done.Status.Result("pod"); r == nil || r.Path != "straight to pod pg-1 (10.88.0.5:5432), no Service hop" {
		t.Errorf("the pod path's description: %+v", r)
	}
}
