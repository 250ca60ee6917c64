package benchmark

import (
	"context"
	"fmt"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// The pod behind the server's Service, for a direct transport via pod: read (never watched) in the
// benchmark's own namespace only.
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list

// resolveServerPod finds the ready pod behind the server's Service, before each run: a
// CloudNativePG primary that changed is followed.
func (r *TunnelBenchmarkReconciler) resolveServerPod(ctx context.Context, tb *benchv1.TunnelBenchmark,
	s transport.Server) (transport.Server, error) {
	service, ok := serviceOf(s.Host, tb.Namespace)
	if !ok {
		return s, &serverError{Reason: conditions.ReasonInvalidSpec, Fatal: true, Message: fmt.Sprintf(
			"direct.via pod needs the server to be a Service of namespace %s, and %s is not one: use via service", tb.Namespace, s.Host)}
	}
	slices := &discoveryv1.EndpointSliceList{}
	if err := r.APIReader.List(ctx, slices, client.InNamespace(tb.Namespace),
		client.MatchingLabels{discoveryv1.LabelServiceName: service}); err != nil {
		return s, err
	}
	pod, problem := pickServerPod(slices.Items, s.Port)
	if problem != "" {
		return s, &serverError{Reason: conditions.ReasonServerUnreachable, Message: fmt.Sprintf(
			"direct.via pod: Service %s: %s", service, problem)}
	}
	s.Pod = pod
	return s, nil
}

// serviceOf is the name of the Service a host names in namespace ns: "name", "name.ns",
// "name.ns.svc" or "name.ns.svc.<cluster domain>"; ok is false for any other host.
func serviceOf(host, ns string) (string, bool) {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	switch {
	case len(parts) == 1:
		return parts[0], parts[0] != ""
	case parts[1] != ns:
		return "", false
	case len(parts) == 2, parts[2] == "svc":
		return parts[0], true
	}
	return "", false
}

// pickServerPod is the first ready endpoint of a Service's slices, on the slice's port for the
// Service's port (a slice's only port, or the one named like PostgreSQL's); problem says why
// there is none.
func pickServerPod(slices []discoveryv1.EndpointSlice, servicePort int32) (transport.ServerPod, string) {
	for _, sl := range slices {
		port, ok := slicePort(sl, servicePort)
		if !ok {
			continue
		}
		for _, ep := range sl.Endpoints {
			if ep.Conditions.Ready == nil || !*ep.Conditions.Ready || len(ep.Addresses) == 0 {
				continue
			}
			name := ""
			if ep.TargetRef != nil {
				name = ep.TargetRef.Name
			}
			return transport.ServerPod{Name: name, IP: ep.Addresses[0], Port: port}, ""
		}
	}
	if len(slices) == 0 {
		return transport.ServerPod{}, "it has no EndpointSlice (no such Service, or no selector)"
	}
	return transport.ServerPod{}, "none of its pods is ready"
}

// slicePort is the pod port of a slice: its only port, or the one named postgres, or the one
// numbered like the Service's port.
func slicePort(sl discoveryv1.EndpointSlice, servicePort int32) (int32, bool) {
	if len(sl.Ports) == 1 && sl.Ports[0].Port != nil {
		return *sl.Ports[0].Port, true
	}
	for _, p := range sl.Ports {
		if p.Port != nil && ((p.Name != nil && *p.Name == "postgres") || *p.Port == servicePort) {
			return *p.Port, true
		}
	}
	return 0, false
}
