package v1alpha1

// TransportType names a kind of path between the client and the server.
// +kubebuilder:validation:Enum=direct;tls;ssh;pooler;vpn;proxy
type TransportType string

const (
	// TransportDirect is plain TCP, with TLS explicitly disabled (sslmode=disable).
	TransportDirect TransportType = "direct"
	// TransportTLS is TCP with TLS negotiated by libpq.
	TransportTLS TransportType = "tls"
	// TransportSSH is one or more SSH tunnels (ssh -L) through a gateway next to the server.
	TransportSSH TransportType = "ssh"
	// TransportPooler is a PgBouncer connection pooler between the client and the server.
	TransportPooler TransportType = "pooler"
	// TransportVPN is a VPN tunnel (WireGuard in user space) through a gateway next to the server.
	TransportVPN TransportType = "vpn"
	// TransportProxy is a TCP proxy (HAProxy) between the client and the server.
	TransportProxy TransportType = "proxy"
)

// TransportSpec is one path to benchmark.
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || self.type == 'tls'",message="tls settings are only allowed for a transport of type tls"
// +kubebuilder:validation:XValidation:rule="self.name != 'init'",message="transport name 'init' is reserved for the initialization Job"
// +kubebuilder:validation:XValidation:rule="!has(self.ssh) || self.type == 'ssh'",message="ssh settings are only allowed for a transport of type ssh"
// +kubebuilder:validation:XValidation:rule="!has(self.pooler) || self.type == 'pooler'",message="pooler settings are only allowed for a transport of type pooler"
// +kubebuilder:validation:XValidation:rule="!has(self.vpn) || self.type == 'vpn'",message="vpn settings are only allowed for a transport of type vpn"
// +kubebuilder:validation:XValidation:rule="!has(self.proxy) || self.type == 'proxy'",message="proxy settings are only allowed for a transport of type proxy"
// +kubebuilder:validation:XValidation:rule="!has(self.direct) || self.type == 'direct'",message="direct settings are only allowed for a transport of type direct"
type TransportSpec struct {
	// Name identifies the transport in results and metrics. It must be a DNS label.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=30
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Type is the kind of path: direct, tls, ssh, pooler, vpn or proxy.
	Type TransportType `json:"type"`

	// Direct configures a transport of type direct. When omitted: through the server's Service.
	// +optional
	Direct *DirectTransport `json:"direct,omitempty"`

	// TLS configures a transport of type tls. When omitted, sslMode is verify-full.
	// +optional
	TLS *TLSTransport `json:"tls,omitempty"`

	// SSH configures a transport of type ssh. When omitted: one tunnel, no compression, OpenSSH's
	// default cipher.
	// +optional
	SSH *SSHTransport `json:"ssh,omitempty"`

	// Pooler configures a transport of type pooler. When omitted: a shared PgBouncer next to the
	// server in session mode, SCRAM from clients, plain TCP from clients and TLS (require) to the
	// server.
	// +optional
	Pooler *PoolerTransport `json:"pooler,omitempty"`

	// VPN configures a transport of type vpn. When omitted: WireGuard, plain libpq inside the
	// tunnel.
	// +optional
	VPN *VPNTransport `json:"vpn,omitempty"`

	// Proxy configures a transport of type proxy. When omitted: HAProxy in TCP mode, plain libpq
	// through it.
	// +optional
	Proxy *ProxyTransport `json:"proxy,omitempty"`

	// Network replaces spec.network for this transport: one benchmark can compare a LAN path with
	// a WAN path. `network: {}` emulates nothing for this transport.
	// +optional
	Network *NetworkSpec `json:"network,omitempty"`
}
