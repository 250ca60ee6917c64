package v1alpha1

// DirectVia says how a direct transport reaches the server.
// +kubebuilder:validation:Enum=service;pod
type DirectVia string

const (
	// ViaService connects to the server's Service: kube-proxy's rules translate its address.
	ViaService DirectVia = "service"
	// ViaPod connects to the address of the pod behind the server's Service (a CloudNativePG
	// primary, the pod of a Service named by spec.server.external.host), resolved from its
	// EndpointSlices before each run: the Service hop, priced against the service path.
	ViaPod DirectVia = "pod"
)

// DirectTransport configures the direct transport.
type DirectTransport struct {
	// Via is service (default) or pod. pod needs a server that is a Service of the benchmark's
	// namespace.
	// +kubebuilder:default=service
	// +optional
	Via DirectVia `json:"via,omitempty"`
}

// DirectVia is how a direct transport reaches the server, service when not set.
func (t TransportSpec) DirectVia() DirectVia {
	if t.Direct == nil || t.Direct.Via == "" {
		return ViaService
	}
	return t.Direct.Via
}
