package v1alpha1

import (
	"cmp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TunnelBenchmarkSpec declares the server, the transports to compare and the load to run through
// each of them.
//
// The spec is immutable: a benchmark is a measurement, and results taken under one spec must not be
// reported under another. To run again, delete and re-create the TunnelBenchmark (or create one
// with a new name).
type TunnelBenchmarkSpec struct {
	// Server is the PostgreSQL server under test.
	Server ServerSpec `json:"server"`

	// Transports are the paths to compare, run one after the other in this order. The first one is
	// the baseline every other result is compared to.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	Transports []TransportSpec `json:"transports"`

	// Load is the pgbench workload run through every transport.
	Load LoadSpec `json:"load"`

	// Runner configures the pods that run pgbench.
	// +optional
	Runner *RunnerSpec `json:"runner,omitempty"`

	// TLS sets where the certificates the operator needs come from: the server certificate of a
	// managed cluster and the certificate a pooler presents to clients. Without it the operator
	// generates them (CloudNativePG its own CA for a managed cluster, the operator one per pooler).
	// +optional
	TLS *BenchmarkTLS `json:"tls,omitempty"`

	// Exclusive (default true) makes the benchmark wait, in phase Queued, while another exclusive
	// benchmark of the same server (host and port, or CloudNativePG cluster) runs: two measurements
	// of one server at once disturb each other, and two `initialize` runs drop each other's tables.
	// Benchmarks start first come, first served by creation time. false opts out: the run is
	// marked unguarded in its results.
	// +kubebuilder:default=true
	// +optional
	Exclusive *bool `json:"exclusive,omitempty"`

	// Timeout bounds the whole benchmark, from leaving the queue to the last transport. When it
	// expires the running Job is stopped and the benchmark fails with reason Timeout.
	// +kubebuilder:default="30m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('10s')",message="spec.timeout must be at least 10s"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Cancel stops the benchmark: the running Job and every peer are removed within seconds and
	// the phase becomes Cancelled, with the runs that finished kept in status. The one field of
	// the spec that may change after creation, and only from false to true.
	// +optional
	Cancel bool `json:"cancel,omitempty"`

	// TTLSecondsAfterFinished removes the benchmark's Jobs, their pods and the runs' result
	// ConfigMaps this many seconds after it ended (Completed, Failed or Cancelled); the
	// TunnelBenchmark with its results stays until deleted. Unset means the operator's default
	// (the chart's cleanup.ttlSecondsAfterFinished); 0 removes them at once. It may be changed at
	// any time, as a Job's.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=31536000
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// Network is an emulated link (round-trip time, jitter, bandwidth) on every transport's path,
	// between the runner pod and the path's remote side; transports[].network overrides it.
	// Without it, the paths run at the cluster network's own speed.
	// +optional
	Network *NetworkSpec `json:"network,omitempty"`

	// Sweep measures every transport at several values of one parameter, each value a point
	// measured as a benchmark without a sweep is (every transport, the repetitions in random
	// interleaved rounds, intervals and verdicts per point), and draws each transport's curve
	// across the points with its knee and peak (status.sweep).
	// +optional
	Sweep *SweepSpec `json:"sweep,omitempty"`
}

// SweepSpec is the one parameter a benchmark sweeps, and its values. Every round runs every
// (point, transport) once, in its own random order, so that drift falls on every point alike and
// round i of one point pairs with round i of the next (the curve's gains are paired).
// +kubebuilder:validation:XValidation:rule="[has(self.clients), has(self.tunnels), has(self.poolSize)].filter(x, x).size() == 1",message="spec.sweep: set exactly one of clients, tunnels or poolSize"
type SweepSpec struct {
	// Clients are the values of pgbench -c, in increasing order; spec.load.clients does not apply,
	// and threads at a point are the fewer of spec.load.threads and its clients.
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=1000
	// +kubebuilder:validation:XValidation:rule="self.isSorted()",message="spec.sweep.clients must be in increasing order"
	// +listType=set
	// +optional
	Clients []int32 `json:"clients,omitempty"`

	// Tunnels are the values of ssh.tunnels of every ssh transport, in increasing order (each
	// transport's own ssh.tunnels does not apply); the other transports are measured at every
	// point alike, as references.
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=32
	// +kubebuilder:validation:XValidation:rule="self.isSorted()",message="spec.sweep.tunnels must be in increasing order"
	// +listType=set
	// +optional
	Tunnels []int32 `json:"tunnels,omitempty"`

	// PoolSize are the values of pooler.poolSize (PgBouncer's default_pool_size) of every pooler
	// transport, in increasing order; each pooler must be a sidecar (placement sidecar), whose
	// PgBouncer starts with each run, so that each point's runs meet a pooler of the point's size.
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=10000
	// +kubebuilder:validation:XValidation:rule="self.isSorted()",message="spec.sweep.poolSize must be in increasing order"
	// +listType=set
	// +optional
	PoolSize []int32 `json:"poolSize,omitempty"`
}

// SweepParameter is what a sweep varies.
// +kubebuilder:validation:Enum=clients;tunnels;poolSize
type SweepParameter string

// Parameters a sweep may vary.
const (
	SweepClients  SweepParameter = "clients"
	SweepTunnels  SweepParameter = "tunnels"
	SweepPoolSize SweepParameter = "poolSize"
)

// BenchmarkTLS configures the certificates the operator requests.
type BenchmarkTLS struct {
	// IssuerRef is the cert-manager Issuer or ClusterIssuer that issues them: the operator creates
	// cert-manager Certificates and waits (bounded) for them to be Ready.
	IssuerRef IssuerReference `json:"issuerRef"`
}

// IssuerReference names a cert-manager issuer.
type IssuerReference struct {
	// Name of the Issuer (in the benchmark's namespace) or ClusterIssuer.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Kind is Issuer (default) or ClusterIssuer.
	// +kubebuilder:validation:Enum=Issuer;ClusterIssuer
	// +kubebuilder:default=Issuer
	// +optional
	Kind string `json:"kind,omitempty"`
	// Group is the issuer's API group; cert-manager.io by default, another for external issuers.
	// +kubebuilder:default=cert-manager.io
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Group string `json:"group,omitempty"`
}

// ServerSpec selects the PostgreSQL server. Exactly one source must be set.
// +kubebuilder:validation:XValidation:rule="[has(self.cnpg), has(self.external), has(self.managed)].filter(x, x).size() == 1",message="spec.server: exactly one of cnpg, external or managed must be set"
type ServerSpec struct {
	// CNPG is an existing CloudNativePG Cluster in the benchmark's namespace. The operator connects
	// to its <clusterName>-rw Service with the <clusterName>-app credentials and trusts the
	// <clusterName>-ca certificate authority, following CloudNativePG's naming conventions.
	// +optional
	CNPG *CNPGServer `json:"cnpg,omitempty"`

	// External is any PostgreSQL server reachable from the runner pods.
	// +optional
	External *ExternalServer `json:"external,omitempty"`

	// Managed is a CloudNativePG Cluster the operator creates for the benchmark, waits for, and
	// deletes once the benchmark has ended (unless retain is true). CloudNativePG must be installed.
	// +optional
	Managed *ManagedServer `json:"managed,omitempty"`
}

// ManagedServer describes the CloudNativePG Cluster the operator creates.
type ManagedServer struct {
	// Instances is the number of PostgreSQL instances (one primary, the rest replicas).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +optional
	Instances int32 `json:"instances,omitempty"`

	// StorageSize is each instance's volume size, at most 1Ti; it must hold spec.load.scale (about
	// 16Mi per unit) and the server's WAL.
	// +kubebuilder:default="1Gi"
	// +kubebuilder:validation:XValidation:rule="quantity(self).compareTo(quantity('64Mi')) >= 0 && quantity(self).compareTo(quantity('1Ti')) <= 0",message="spec.server.managed.storageSize must be between 64Mi and 1Ti"
	// +optional
	StorageSize *resource.Quantity `json:"storageSize,omitempty"`

	// StorageClass of the instances' volumes; empty means the cluster's default StorageClass.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	StorageClass string `json:"storageClass,omitempty"`

	// ImageName is the PostgreSQL image; its tag must start with the major version, as
	// CloudNativePG requires. Defaults to the operator's configured PostgreSQL image.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	ImageName string `json:"imageName,omitempty"`

	// Parameters are postgresql.conf settings passed to CloudNativePG.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Parameters map[string]string `json:"parameters,omitempty"`

	// Retain keeps the Cluster after the benchmark has ended (it is still deleted with the
	// benchmark, which owns it).
	// +optional
	Retain bool `json:"retain,omitempty"`
}

// CNPGServer references a CloudNativePG Cluster.
type CNPGServer struct {
	// ClusterName is the name of the CloudNativePG Cluster.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=50
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	ClusterName string `json:"clusterName"`

	// Database to connect to. Defaults to "app", the database CloudNativePG bootstraps.
	// +kubebuilder:default=app
	// +optional
	Database DatabaseName `json:"database,omitempty"`
}

// DatabaseName is a database's name and nothing else. libpq reads a dbname holding "=" as a
// connection string and one starting with postgres:// or postgresql:// as a URI: its host, port
// and sslmode would then replace the benchmark's own, past the host checks, the transport and the
// TLS mode, while the preflight checks the real server. Every database field of the API is of
// this type, so that none can skip the rule.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:XValidation:rule="!self.contains('=') && !self.startsWith('postgres://') && !self.startsWith('postgresql://')",message="must be a database name, not a connection string or URI: libpq reads a name holding '=' or starting with postgres:// or postgresql:// as one"
type DatabaseName string

// ExternalServer is a PostgreSQL server given by host and port.
type ExternalServer struct {
	// Host is the server's DNS name or IP address (an IPv6 address without brackets). Nothing else:
	// the SSH gateway's PermitOpen and the tunnels' -L are built from it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="isIP(self) || self.matches('^[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?([.][A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*[.]?$')",message="spec.server.external.host must be a DNS name (letters, digits, hyphens, dots) or an IP address, an IPv6 one without brackets"
	Host string `json:"host"`

	// Port is the server's TCP port.
	// +kubebuilder:default=5432
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`

	// Database to connect to.
	// +kubebuilder:validation:MinLength=1
	Database DatabaseName `json:"database"`

	// CredentialsSecret names a Secret in the benchmark's namespace that holds the user name and
	// password (keys "username" and "password", as in a kubernetes.io/basic-auth Secret).
	CredentialsSecret LocalObjectReference `json:"credentialsSecret"`

	// CASecret names a Secret holding the certificate authority (key "ca.crt") that signed the
	// server's certificate. It is required by the TLS modes verify-ca and verify-full.
	// +optional
	CASecret *LocalObjectReference `json:"caSecret,omitempty"`
}

// LocalObjectReference names an object in the benchmark's namespace.
type LocalObjectReference struct {
	// Name of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

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

// PoolerPlacement says where the pooler runs.
// +kubebuilder:validation:Enum=service;sidecar
type PoolerPlacement string

const (
	// PoolerService is a shared pooler next to the server, reached through a Service: a
	// CloudNativePG Pooler for a CloudNativePG server, the operator's own PgBouncer otherwise.
	PoolerService PoolerPlacement = "service"
	// PoolerSidecar runs PgBouncer inside the client pod: clients log in over loopback without a
	// password (trust), and only the pooler's few long-lived connections cross the network.
	PoolerSidecar PoolerPlacement = "sidecar"
)

// PoolerTransport configures the pooler transport. Where the pooler sits and how clients log in
// to it decide connection cost: a pooler that still runs SCRAM and TLS for every client login
// saves little, one inside the client pod with loopback trust saves the handshakes.
// +kubebuilder:validation:XValidation:rule="!has(self.clientTLS) || self.clientTLS == 'disable' || !has(self.placement) || self.placement == 'service'",message="pooler.clientTLS require applies to placement service: a sidecar pooler is reached over the pod's loopback"
// +kubebuilder:validation:XValidation:rule="!has(self.over) || (has(self.placement) && self.placement == 'sidecar')",message="pooler.over applies to placement sidecar: a pooler next to the server has no path of its own to go through"
// +kubebuilder:validation:XValidation:rule="!has(self.over) || !has(self.serverTLS) || self.serverTLS != 'verify-full'",message="pooler.serverTLS verify-full cannot check the server's name through pooler.over (the pooler connects to the path's near end): use require"
type PoolerTransport struct {
	// Placement is service (default: a pooler next to the server, behind a Service) or sidecar
	// (PgBouncer inside the client pod, as a native sidecar).
	// +kubebuilder:default=service
	// +optional
	Placement PoolerPlacement `json:"placement,omitempty"`

	// PoolMode is PgBouncer's pool_mode: session (default) or transaction. PgBouncer 1.18, the
	// pooler image's, cannot keep prepared statements in transaction mode.
	// +kubebuilder:default=session
	// +optional
	PoolMode PoolMode `json:"poolMode,omitempty"`

	// PoolSize is default_pool_size: server connections per user and database. Default 20. In
	// session mode it must cover spec.load.clients.
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +optional
	PoolSize int32 `json:"poolSize,omitempty"`

	// MaxClientConnections is max_client_conn. It must cover spec.load.clients. Default 1000.
	// +kubebuilder:default=1000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	MaxClientConnections int32 `json:"maxClientConnections,omitempty"`

	// ClientTLS is TLS between pgbench and the pooler: disable (default) or require. The pooler's
	// certificate is issued by a CA the operator generates for the benchmark.
	// +kubebuilder:default=disable
	// +optional
	ClientTLS PoolerClientTLS `json:"clientTLS,omitempty"`

	// ServerTLS is TLS between the pooler and the server: disable, require (the default) or
	// verify-full (against the server's CA). A CloudNativePG Pooler always uses TLS with its own
	// client certificate, so this is not settable for it.
	// +optional
	ServerTLS PoolerServerTLS `json:"serverTLS,omitempty"`

	// Over names another transport of this benchmark, of type ssh, vpn or proxy, whose path the
	// sidecar pooler's server connections go through: the pooler on the client host in front of
	// a tunnel, as in the studies. That transport is measured on its own too; its settings (its
	// sslMode aside: serverTLS decides TLS to the server) and its gateway serve both.
	// +kubebuilder:validation:MaxLength=30
	// +optional
	Over string `json:"over,omitempty"`
}

// PoolMode is PgBouncer's pool_mode.
// +kubebuilder:validation:Enum=session;transaction
type PoolMode string

const (
	// PoolModeSession gives each client a server connection for its whole session.
	PoolModeSession PoolMode = "session"
	// PoolModeTransaction gives a client a server connection for one transaction at a time.
	PoolModeTransaction PoolMode = "transaction"
)

// PoolerClientTLS is TLS between the clients and the pooler.
// +kubebuilder:validation:Enum=disable;require
type PoolerClientTLS string

const (
	// ClientTLSDisable is plain TCP from the clients.
	ClientTLSDisable PoolerClientTLS = "disable"
	// ClientTLSRequire makes the pooler present a certificate and refuse plain TCP.
	ClientTLSRequire PoolerClientTLS = "require"
)

// PoolerServerTLS is PgBouncer's server_tls_sslmode, between the pooler and the server.
// +kubebuilder:validation:Enum=disable;require;verify-full
type PoolerServerTLS string

const (
	// ServerTLSDisable is plain TCP to the server.
	ServerTLSDisable PoolerServerTLS = "disable"
	// ServerTLSRequire encrypts without checking the server certificate.
	ServerTLSRequire PoolerServerTLS = "require"
	// ServerTLSVerifyFull checks the server certificate against the server's CA and its name.
	ServerTLSVerifyFull PoolerServerTLS = "verify-full"
)

// EffectivePooler is the pooler settings as the apiserver defaults them, for a transport whose
// pooler block is omitted (defaults only apply inside a present block) or written by a Go client
// that skipped defaulting. serverTLS has no schema default: a CloudNativePG Pooler must not set it.
func (t TransportSpec) EffectivePooler() PoolerTransport {
	p := PoolerTransport{}
	if t.Pooler != nil {
		p = *t.Pooler
	}
	p.Placement = cmp.Or(p.Placement, DefaultPoolerPlacement)
	p.PoolMode = cmp.Or(p.PoolMode, DefaultPoolMode)
	p.PoolSize = cmp.Or(p.PoolSize, DefaultPoolSize)
	p.MaxClientConnections = cmp.Or(p.MaxClientConnections, DefaultMaxClientConnections)
	p.ClientTLS = cmp.Or(p.ClientTLS, DefaultPoolerClientTLS)
	p.ServerTLS = cmp.Or(p.ServerTLS, DefaultPoolerServerTLS)
	return p
}

// SSHTransport configures SSH tunnels: the operator runs an sshd gateway next to the server and
// one `ssh -N -L` sidecar per tunnel next to pgbench.
// +kubebuilder:validation:XValidation:rule="!has(self.mac) || (has(self.cipher) && self.cipher.endsWith('-ctr'))",message="ssh.mac applies only to the non-AEAD ciphers aes128-ctr, aes192-ctr and aes256-ctr: the gcm and chacha20-poly1305 ciphers carry their own integrity"
// +kubebuilder:validation:XValidation:rule="!has(self.compressionLevel)",message="ssh.compressionLevel only ever applied to SSH protocol 1, which OpenSSH removed; use compression: true"
type SSHTransport struct {
	// Compression turns on zlib compression (ssh -C).
	// +optional
	Compression bool `json:"compression,omitempty"`

	// Cipher is the cipher the tunnels ask for (ssh -c); empty means OpenSSH's default choice.
	// The result records what was really negotiated.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('blowfish') && !self.startsWith('arcfour') && !self.startsWith('3des') && !self.startsWith('cast128')",message="blowfish, arcfour, 3des and cast128 were removed from OpenSSH 7: use aes128-gcm@openssh.com, aes256-gcm@openssh.com, chacha20-poly1305@openssh.com or aes128-ctr/aes192-ctr/aes256-ctr"
	// +kubebuilder:validation:XValidation:rule="self in ['chacha20-poly1305@openssh.com', 'aes128-gcm@openssh.com', 'aes256-gcm@openssh.com', 'aes128-ctr', 'aes192-ctr', 'aes256-ctr']",message="ssh.cipher must be one of chacha20-poly1305@openssh.com, aes128-gcm@openssh.com, aes256-gcm@openssh.com, aes128-ctr, aes192-ctr, aes256-ctr"
	// +optional
	Cipher string `json:"cipher,omitempty"`

	// MAC is the message authentication code (ssh -m), only for the -ctr ciphers.
	// +kubebuilder:validation:Enum=hmac-sha2-256-etm@openssh.com;hmac-sha2-512-etm@openssh.com;umac-128-etm@openssh.com;hmac-sha2-256;hmac-sha2-512;umac-128@openssh.com
	// +optional
	MAC string `json:"mac,omitempty"`

	// Tunnels is the number of parallel tunnels. With N tunnels, N pgbench processes start at the
	// same moment, one per tunnel, with clients and threads split evenly; their figures are summed
	// (tps, transactions, failures) or weighted (latency) and kept per tunnel too.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32
	// +optional
	Tunnels int32 `json:"tunnels,omitempty"`

	// KeepAliveInterval is ssh's ServerAliveInterval: a dead tunnel is noticed after three
	// missed replies. Default 10s.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="ssh.keepAliveInterval must be at least 1s"
	// +optional
	KeepAliveInterval *metav1.Duration `json:"keepAliveInterval,omitempty"`

	// SSLMode is libpq's sslmode inside the tunnel: disable (default: the tunnel alone encrypts),
	// require or verify-ca (TLS on top of SSH, end to end to the server). Not verify-full: the
	// client connects to the tunnel's loopback end, not to the server's name.
	// +kubebuilder:default=disable
	// +optional
	SSLMode InnerSSLMode `json:"sslMode,omitempty"`

	// CompressionLevel is not supported: it only ever applied to SSH protocol 1. It is declared
	// so that a manifest carrying it is rejected with that explanation instead of silently pruned.
	// +optional
	CompressionLevel *int32 `json:"compressionLevel,omitempty"`
}

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

// VPNKind names a VPN implementation.
// +kubebuilder:validation:Enum=wireguard;openvpn
type VPNKind string

const (
	// VPNWireGuard is WireGuard in user space (wireguard-go over its own network stack): no TUN
	// device and no capability in either pod.
	VPNWireGuard VPNKind = "wireguard"
	// VPNOpenVPN is Debian's OpenVPN in TLS mode over UDP with a TUN device at each end: openvpn
	// runs as root with NET_ADMIN in the gateway and in a sidecar of the runner pod, so only where
	// the operator's administrator allowed it (the chart's transports.openvpn.enabled) and in a
	// namespace whose Pod Security level admits such pods (privileged).
	VPNOpenVPN VPNKind = "openvpn"
)

// PrivilegedReason says why the transport's pods would run privileged (root with a capability or
// a device), "" when they run restricted: such a transport runs only where the operator's
// administrator allowed it.
func (t TransportSpec) PrivilegedReason() string {
	if t.Type == TransportVPN && t.EffectiveVPN().Kind == VPNOpenVPN {
		return "vpn.kind openvpn runs openvpn as root with NET_ADMIN and a TUN device, in the gateway and in the runner pod"
	}
	return ""
}

// VPNTransport configures the vpn transport: a tunnel from the runner pod to a gateway next to the
// server, which forwards only to the server. The VPN encrypts every byte once, on the way; what a
// connection's own handshake costs then is libpq's alone (sslMode).
type VPNTransport struct {
	// Kind is the VPN: wireguard (default, user space, restricted pods) or openvpn (a TUN device:
	// privileged pods, only where the operator's administrator allowed it).
	// +kubebuilder:default=wireguard
	// +optional
	Kind VPNKind `json:"kind,omitempty"`

	// SSLMode is libpq's sslmode inside the tunnel: disable (default: the VPN alone encrypts),
	// require or verify-ca (PostgreSQL's TLS on top, end to end: the question of a team whose VPN
	// or CNI already encrypts). Not verify-full: the client connects to the tunnel's loopback end.
	// +kubebuilder:default=disable
	// +optional
	SSLMode InnerSSLMode `json:"sslMode,omitempty"`
}

// EffectiveVPN is the vpn settings with the defaults applied, for a transport of type vpn.
func (t TransportSpec) EffectiveVPN() VPNTransport {
	v := VPNTransport{}
	if t.VPN != nil {
		v = *t.VPN
	}
	v.Kind = cmp.Or(v.Kind, VPNWireGuard)
	v.SSLMode = cmp.Or(v.SSLMode, DefaultSSHSSLMode)
	return v
}

// ProxyKind names a proxy implementation.
// +kubebuilder:validation:Enum=haproxy
type ProxyKind string

// ProxyHAProxy is HAProxy in TCP mode.
const ProxyHAProxy ProxyKind = "haproxy"

// ProxyTransport configures the proxy transport: one TCP hop (a load balancer, HAProxy in front of
// Patroni) next to the server. It passes libpq's TLS through untouched: PostgreSQL 15's libpq
// asks for TLS inside the protocol, which a TCP proxy cannot terminate.
type ProxyTransport struct {
	// Kind is the proxy: haproxy (default).
	// +kubebuilder:default=haproxy
	// +optional
	Kind ProxyKind `json:"kind,omitempty"`

	// SSLMode is libpq's sslmode through the proxy, end to end to the server: disable (default),
	// require or verify-ca. Not verify-full: the client connects to the proxy's name.
	// +kubebuilder:default=disable
	// +optional
	SSLMode InnerSSLMode `json:"sslMode,omitempty"`
}

// EffectiveProxy is the proxy settings with the defaults applied, for a transport of type proxy.
func (t TransportSpec) EffectiveProxy() ProxyTransport {
	p := ProxyTransport{}
	if t.Proxy != nil {
		p = *t.Proxy
	}
	p.Kind = cmp.Or(p.Kind, ProxyHAProxy)
	p.SSLMode = cmp.Or(p.SSLMode, DefaultSSHSSLMode)
	return p
}

// EffectiveSSH is the ssh settings with the defaults applied, for a transport of type ssh.
func (t TransportSpec) EffectiveSSH() SSHTransport {
	s := SSHTransport{}
	if t.SSH != nil {
		s = *t.SSH
	}
	s.Tunnels = cmp.Or(s.Tunnels, DefaultTunnels)
	s.SSLMode = cmp.Or(s.SSLMode, DefaultSSHSSLMode)
	if s.KeepAliveInterval == nil {
		s.KeepAliveInterval = &metav1.Duration{Duration: DefaultKeepAliveInterval}
	}
	return s
}

// InnerSSLMode is libpq's sslmode through another path (a tunnel, a proxy): disable (the path
// alone encrypts, or nothing does), require or verify-ca (PostgreSQL's TLS end to end through it).
// verify-full cannot apply: the client connects to the path's near end, not to the server's name.
// +kubebuilder:validation:Enum=disable;require;verify-ca
type InnerSSLMode string

// SSLMode is libpq's sslmode for a TLS transport. Modes that may fall back to plain TCP (allow,
// prefer) are not offered: the transport would not measure what its name says.
// +kubebuilder:validation:Enum=require;verify-ca;verify-full
type SSLMode string

const (
	// SSLModeRequire encrypts without checking the server certificate.
	SSLModeRequire SSLMode = "require"
	// SSLModeVerifyCA encrypts and checks the certificate chain.
	SSLModeVerifyCA SSLMode = "verify-ca"
	// SSLModeVerifyFull encrypts and checks the chain and the host name.
	SSLModeVerifyFull SSLMode = "verify-full"
)

// TLSTransport configures TLS between the runner and the server.
// +kubebuilder:validation:XValidation:rule="!(has(self.clientCertSecret) && has(self.clientCertificate))",message="tls: clientCertSecret and clientCertificate are mutually exclusive"
type TLSTransport struct {
	// SSLMode is libpq's sslmode.
	// +kubebuilder:default=verify-full
	// +optional
	SSLMode SSLMode `json:"sslMode,omitempty"`

	// ClientCertSecret names a kubernetes.io/tls Secret (keys tls.crt and tls.key) whose
	// certificate the runner presents to the server.
	// +optional
	ClientCertSecret *LocalObjectReference `json:"clientCertSecret,omitempty"`

	// ClientCertificate has spec.tls.issuerRef issue the client certificate the runner presents,
	// for servers that authenticate clients by certificate (pg_hba `cert`): the server must trust
	// the issuer's CA.
	// +optional
	ClientCertificate *ClientCertificate `json:"clientCertificate,omitempty"`
}

// ClientCertificate is a client certificate requested from the benchmark's issuer.
type ClientCertificate struct {
	// CommonName is the certificate's CN: the database user it authenticates, for pg_hba `cert`
	// (without a user name map).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	CommonName string `json:"commonName"`
}

// EffectiveSSLMode is the sslmode used for a TLS transport, applying the default when the tls block
// is omitted.
func (t TransportSpec) EffectiveSSLMode() SSLMode {
	if t.TLS == nil {
		return DefaultTLSSSLMode
	}
	return cmp.Or(t.TLS.SSLMode, DefaultTLSSSLMode)
}

// BuiltinScript is one of pgbench's builtin scripts.
// +kubebuilder:validation:Enum=select-only;tpcb-like;simple-update
type BuiltinScript string

// Protocol is pgbench's query mode (-M).
// +kubebuilder:validation:Enum=simple;extended;prepared
type Protocol string

// RunOrder is the order in which repetitions of the transports run.
// +kubebuilder:validation:Enum=interleaved;sequential
type RunOrder string

const (
	// OrderInterleaved runs the transports round-robin: A B C, A B C, ...
	OrderInterleaved RunOrder = "interleaved"
	// OrderSequential runs every repetition of a transport before the next: A A A, B B B, ...
	OrderSequential RunOrder = "sequential"
)

// LoadSpec is the pgbench workload.
// +kubebuilder:validation:XValidation:rule="[has(self.builtin), has(self.script), has(self.copy)].filter(x, x).size() == 1",message="spec.load: exactly one of builtin, script or copy must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.copy) || (has(self.initialize) && self.initialize)",message="spec.load.copy needs spec.load.initialize: true: the initialization creates the data set on the server, over a direct connection"
// +kubebuilder:validation:XValidation:rule="!has(self.copy) || (!(has(self.reconnect) && self.reconnect) && !has(self.connectionStorm) && !has(self.transactions) && !has(self.rate) && !has(self.latencyLimit))",message="spec.load.copy: reconnect, connectionStorm, transactions, rate and latencyLimit apply to pgbench loads only"
// +kubebuilder:validation:XValidation:rule="!(has(self.duration) && has(self.transactions))",message="spec.load: duration and transactions are mutually exclusive"
// +kubebuilder:validation:XValidation:rule="!has(self.stallTimeout) || !has(self.progressInterval) || duration(self.stallTimeout).getSeconds() >= 2 * duration(self.progressInterval).getSeconds()",message="spec.load.stallTimeout must be at least twice spec.load.progressInterval: a stall is judged from pgbench's progress reports"
type LoadSpec struct {
	// Builtin is one of pgbench's builtin scripts.
	// +optional
	Builtin BuiltinScript `json:"builtin,omitempty"`

	// Script is an inline pgbench script (SQL and pgbench meta-commands), such as "select 1;".
	// pgbench's \shell and \setshell are refused in every spelling pgbench reads (ShellMetaCommand):
	// they would run commands in the runner, whose environment holds the server's password, so
	// anyone allowed to create a benchmark could read a Secret they may not get themselves.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16384
	// +kubebuilder:validation:XValidation:rule="!self.matches(r'(?i)\\\\(?:[ \\t\\r\\f\\v]|\\\\\\r?\\n)*(?:set)?shell')",message="spec.load.script must not use pgbench's \\shell or \\setshell in any spelling (a backslash, spaces or continuations, then shell or setshell in any case): they run commands in the runner, next to the server's password"
	// +optional
	Script string `json:"script,omitempty"`

	// Clients is the number of concurrent database sessions (pgbench -c). At most 1000: each is a
	// server backend, and PostgreSQL's default max_connections is 100; for a managed server,
	// clients must leave superuser_reserved_connections (3) of its max_connections free.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Clients int32 `json:"clients,omitempty"`

	// Threads is the number of pgbench worker threads (pgbench -j).
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	Threads int32 `json:"threads,omitempty"`

	// Duration of each transport's run (pgbench -T). When neither duration nor transactions is
	// set, each run lasts 60s.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="spec.load.duration must be between 1s and 24h"
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`

	// Transactions per client (pgbench -t), instead of a duration. At most 10,000,000 per
	// client: the run must end within spec.timeout, which a duration bounds but a count does not.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	// +optional
	Transactions *int32 `json:"transactions,omitempty"`

	// Protocol is the query protocol (pgbench -M).
	// +kubebuilder:default=simple
	// +optional
	Protocol Protocol `json:"protocol,omitempty"`

	// Reconnect opens a new connection for every transaction (pgbench -C), to measure connection
	// cost: TLS and authentication handshakes are paid per transaction.
	// +optional
	Reconnect bool `json:"reconnect,omitempty"`

	// Rate runs the load open-loop: pgbench schedules this many transactions per second for the
	// whole run, across all clients (pgbench -R; split evenly across SSH tunnels), and each
	// transaction's latency counts from its scheduled start, so a stall of the path delays every
	// transaction scheduled behind it instead of the few in flight (closed loop's coordinated
	// omission). Every path then runs the same number of transactions per second and tps says
	// nothing of it: an open-loop benchmark compares the paths by their mean latency (schedule lag
	// included). Choose it for tail latency, and over a WAN, where closed-loop tps is only clients
	// over the round trip; the rate must be one every path sustains (a run that skips more than
	// 1 % of its schedule takes no part in the comparisons).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	// +optional
	Rate *int32 `json:"rate,omitempty"`

	// LatencyLimit counts transactions that last longer as late (pgbench -L); with rate, a
	// transaction already this far behind its schedule is skipped rather than run, and counted.
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('100us') && duration(self) <= duration('1h')",message="spec.load.latencyLimit must be between 100us and 1h"
	// +optional
	LatencyLimit *metav1.Duration `json:"latencyLimit,omitempty"`

	// ConnectionStorm, after the load, opens N connections one after the other from one client,
	// each running `select 1` and disconnecting (pgbench -C -c 1 -t N), and reports the total
	// time, connections per second and mean time per connection. With repetitions, it runs after
	// each transport's last round (at each sweep point) only.
	// +optional
	ConnectionStorm *ConnectionStorm `json:"connectionStorm,omitempty"`

	// Copy, instead of a pgbench script, moves a data set through every transport: one COPY per
	// run, measured in MB/s and rows/s (needs initialize: true, which creates the data set).
	// Clients, threads, protocol and warmup do not apply; duration bounds nothing (a copy runs
	// until done, within spec.timeout).
	// +optional
	Copy *CopyLoad `json:"copy,omitempty"`

	// Scale is the scale factor for initialization (pgbench -i -s): about 16 MB on the server per
	// unit (100,000 pgbench_accounts rows and their index). At most 10000 (about 160 GB); a
	// managed server's storageSize must hold it.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +optional
	Scale int32 `json:"scale,omitempty"`

	// Initialize runs `pgbench -i` once before the transports, over a direct connection. It drops
	// and re-creates the pgbench_* tables, so it is off unless asked for.
	// +optional
	Initialize bool `json:"initialize,omitempty"`

	// Repetitions is how many times each transport is measured. Every figure in status is a
	// summary of the repetitions (the median, with min, max and coefficient of variation), and
	// each transport's ratio to the first one comes with a 95 % confidence interval from the
	// paired repetitions. The default, 3, is the fewest that give an interval (one repetition
	// gives none, and with two Student's t is 12.7, an interval too wide to decide anything) at
	// three times the time of a single run; raise it when the verdicts say "indistinguishable"
	// and the difference matters.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	// +optional
	Repetitions int32 `json:"repetitions,omitempty"`

	// Order of the runs: interleaved (the default) runs round 1 of every transport, then round 2,
	// and so on, each round in its own random order (seeded: see seed), so that whatever drifts on
	// the machine (other workloads, caches, table bloat under a write load) hits every transport
	// alike and no transport always runs first or last; round i of a transport is then compared
	// with round i of the baseline (paired). Sequential runs all repetitions of a transport before
	// the next, the transports in a random order; drift between transports then does not cancel,
	// so their runs are compared unpaired (Welch), with wider intervals, and a drift of the machine
	// can still make a verdict: prefer interleaved. Peers (an SSH gateway, poolers) stay up
	// between the rounds of an interleaved benchmark.
	// +kubebuilder:default=interleaved
	// +optional
	Order RunOrder `json:"order,omitempty"`

	// Seed of the random run order. When unset it is derived from the benchmark's UID, so every
	// benchmark gets its own order; status.runOrder records the seed and the order that ran, and
	// setting the same seed (with the same transports and repetitions) runs the same order again.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=9007199254740991
	// +optional
	Seed *int64 `json:"seed,omitempty"`

	// Warmup is a pgbench run of this length before each measured run, through the same path and
	// pod, whose figures are discarded: it fills the server's and the path's caches and opens the
	// tunnels. 0s skips it.
	// +kubebuilder:default="5s"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('1h')",message="spec.load.warmup must be between 0s and 1h"
	// +optional
	Warmup *metav1.Duration `json:"warmup,omitempty"`

	// StallTimeout fails a run in which no transaction completes for this long (reason Stalled),
	// judged from pgbench's progress reports: a partitioned network, a server that hangs or a
	// path that lost its peer leaves pgbench waiting on its sockets, where no error would come
	// before spec.timeout. Raise it for scripts whose transactions last longer.
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('5s') && duration(self) <= duration('1h')",message="spec.load.stallTimeout must be between 5s and 1h"
	// +optional
	StallTimeout *metav1.Duration `json:"stallTimeout,omitempty"`

	// ProgressInterval is pgbench's progress report interval (-P), in whole seconds.
	// +kubebuilder:default="5s"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="spec.load.progressInterval must be at least 1s"
	// +optional
	ProgressInterval *metav1.Duration `json:"progressInterval,omitempty"`
}

// ConnectionStorm is a sequential connect, select 1, disconnect loop.
type ConnectionStorm struct {
	// Connections is how many connections to open, one after the other. At most 100000: each
	// one is a fork of a server backend and an authentication, and on a 2-core server a storm
	// opens about a thousand a second, so 100000 already lasts minutes.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	Connections int32 `json:"connections"`
}

// RunnerSpec configures the pods that run pgbench. Where the client runs matters: place it with
// nodeSelector, tolerations and affinity.
type RunnerSpec struct {
	// Image runs the TunnelBench runner and pgbench. Defaults to the operator's configured image.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// ImagePullPolicy for the runner image.
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// Resources of the runner container. When omitted the runner requests 500m CPU and 128Mi of
	// memory: a BestEffort pod gets almost no CPU share under load and would measure the
	// scheduler, not the path. No CPU limit is set by default, since CFS throttling distorts latency.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// NodeSelector for the runner pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations for the runner pods.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity for the runner pods.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// Pods runs each measured run as this many runner pods (an Indexed Job), the clients and
	// threads split evenly across them, each with its own copy of the transport's client side
	// (tunnels, a sidecar pooler, the link proxy). Every pod connects and warms up first; the
	// operator then starts their measured loads at one moment, and the run's figures are their sum
	// (tps, transactions) and merge (latency histograms), with each pod's own in status. Default 1.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	// +optional
	Pods int32 `json:"pods,omitempty"`

	// TopologySpreadConstraints of the runner pods. With several pods and neither these nor an
	// affinity set, they are spread across nodes where the scheduler can (kubernetes.io/hostname,
	// ScheduleAnyway).
	// +kubebuilder:validation:MaxItems=8
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
}

// Phase is the coarse state of a benchmark.
// +kubebuilder:validation:Enum=Queued;Pending;Initializing;Running;Completed;Failed;Cancelled
type Phase string

const (
	// PhaseQueued means another benchmark of the same server runs: this one starts when it ends.
	PhaseQueued Phase = "Queued"
	// PhasePending means the benchmark is accepted and waits for its server to resolve.
	PhasePending Phase = "Pending"
	// PhaseInitializing means `pgbench -i` is running.
	PhaseInitializing Phase = "Initializing"
	// PhaseRunning means the transports are being measured.
	PhaseRunning Phase = "Running"
	// PhaseCompleted means every transport has a result.
	PhaseCompleted Phase = "Completed"
	// PhaseFailed means the benchmark stopped; the Failed condition says why.
	PhaseFailed Phase = "Failed"
	// PhaseCancelled means spec.cancel stopped the benchmark; the runs that finished are kept.
	PhaseCancelled Phase = "Cancelled"
)

// IsTerminal reports whether the phase is final.
func (p Phase) IsTerminal() bool {
	return p == PhaseCompleted || p == PhaseFailed || p == PhaseCancelled
}

// LinkTolerance is how far a measured RTT or bandwidth may be from the asked one before
// the LinkMismatch condition warns.
const LinkTolerance = 0.20

// LiveRun is the run in progress, as the runner last reported it.
type LiveRun struct {
	Transport string `json:"transport"`
	// Point is the sweep's point the run measures, e.g. "clients=16"; absent without a sweep.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Point       string `json:"point,omitempty"`
	Round       int32  `json:"round"`
	Repetitions int32  `json:"repetitions"`
	// Phase is warm-up (discarded) or load (measured).
	Phase string `json:"phase"`
	// ElapsedSeconds of DurationSeconds (none for a load of a number of transactions).
	ElapsedSeconds  float64 `json:"elapsedSeconds"`
	DurationSeconds float64 `json:"durationSeconds,omitempty"`
	// TPS and LatencyMs of pgbench's latest progress interval, over every tunnel.
	TPS       float64 `json:"tps"`
	LatencyMs float64 `json:"latencyMs"`
	// UpdateTime is when the runner read that report.
	UpdateTime metav1.Time `json:"updateTime"`
}

// TunnelBenchmarkStatus is the observed state of a benchmark and its results.
type TunnelBenchmarkStatus struct {
	// Phase is the coarse state: Pending, Initializing, Running, Completed or Failed.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// ObservedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: ServerResolved, Initialized, Progressing, Completed, Failed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Progress counts finished runs (sweep points × transports × repetitions), e.g. "4/9".
	// +optional
	Progress string `json:"progress,omitempty"`

	// PlannedRunTime is how long the measured runs take at least, set when the benchmark is
	// accepted: runs × (warm-up + duration), without the pods' start; absent for a load of a
	// number of transactions or a copy. `kubectl tunnelbench plan -f` shows it before applying.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	PlannedRunTime string `json:"plannedRunTime,omitempty"`

	// Server is the endpoint benchmarked, as host:port/database.
	// +optional
	Server string `json:"server,omitempty"`

	// ServerVersion is what the server reports (SHOW server_version).
	// +optional
	ServerVersion string `json:"serverVersion,omitempty"`

	// ManagedCluster is the name of the CloudNativePG Cluster created for spec.server.managed.
	// +optional
	ManagedCluster string `json:"managedCluster,omitempty"`

	// StartTime is when the controller first acted on the benchmark.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// CompletionTime is when the benchmark completed or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Results holds one entry per finished transport, in spec order.
	// +listType=map
	// +listMapKey=transport
	// +optional
	Results []TransportResult `json:"results,omitempty"`

	// Best names the transport whose tps is significantly ahead of every other (their 95 %
	// intervals say so), or, when none is, the transports that tie for the top.
	// +optional
	Best *BestTransport `json:"best,omitempty"`

	// Sweep holds a swept benchmark's results (spec.sweep): each point's, as results holds a
	// benchmark's without a sweep (results and best are then empty), and each transport's curve.
	// +optional
	Sweep *SweepStatus `json:"sweep,omitempty"`

	// RunOrder is the order the runs were planned in: its seed and each round's transports.
	// +optional
	RunOrder *RunOrderStatus `json:"runOrder,omitempty"`

	// History says whether the results are in the operator's history store: absent without a
	// store, or before the benchmark ended.
	// +optional
	History *HistoryRecord `json:"history,omitempty"`

	// Regression is, for a benchmark a schedule created, each transport's figures judged against
	// the schedule's earlier results (its Regressed condition sums it up).
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Regression []TransportJudgement `json:"regression,omitempty"`

	// Live is the run in progress while a transport's load runs: which, how far, and the tps of
	// pgbench's latest progress report, updated at the progress interval (at most one status
	// write per interval). Absent between runs and once the benchmark ended.
	// +optional
	Live *LiveRun `json:"live,omitempty"`
}

// HistoryRecord is whether a benchmark's results reached the history store.
type HistoryRecord struct {
	// Recorded is true once the results are in the store (written once: recording again changes
	// nothing).
	Recorded bool `json:"recorded"`
	// Time is when they were recorded, or when the last attempt failed.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
	// Attempts counts the attempts made.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// Message says why not yet (the store unreachable, retried with backoff).
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Message string `json:"message,omitempty"`
}

// SweepStatus is what a sweep measured: every point's results and every transport's curve.
type SweepStatus struct {
	// Parameter is what the sweep varies.
	Parameter SweepParameter `json:"parameter"`
	// Points hold each value's results, in the spec's order.
	// +kubebuilder:validation:MaxItems=16
	Points []SweepPoint `json:"points"`
	// Curves are each transport's figures across the points, with knee and peak, in spec order,
	// once every point has at least one run of the transport.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Curves []SweepCurve `json:"curves,omitempty"`
}

// SweepPoint is one value of a sweep and what every transport measured at it.
type SweepPoint struct {
	// Value is the swept parameter's value.
	Value int32 `json:"value"`
	// Results holds one entry per transport measured at this point, in spec order, each compared
	// with the baseline at the same point.
	// +listType=map
	// +listMapKey=transport
	// +optional
	Results []TransportResult `json:"results,omitempty"`
	// Best is the point's fastest transport, as status.best of a benchmark without a sweep.
	// +optional
	Best *BestTransport `json:"best,omitempty"`
}

// SweepCurve is how one transport's figure moves as the swept parameter grows.
type SweepCurve struct {
	Transport string `json:"transport"`
	// Points are the transport's median figure at each value, with its interval, its latency and
	// its gain over the previous point.
	// +kubebuilder:validation:MaxItems=16
	Points []CurvePoint `json:"points"`
	// Knee is the value of the last point whose gain over the previous point is significant: its
	// paired interval (Holm-adjusted over the curve's steps) lies wholly above 1 + KneeMinGain.
	// The first value when no step gains; unset until every point has two rounds.
	// +optional
	Knee *int32 `json:"knee,omitempty"`
	// Saturated is true when a later point than the knee was measured: the curve stopped gaining
	// within the sweep. False with the knee at the last point: it may still gain beyond.
	Saturated bool `json:"saturated"`
	// KneeReason says how the knee was found, or why there is none.
	// +kubebuilder:validation:MaxLength=1024
	KneeReason string `json:"kneeReason"`
	// Peak is the value with the highest median figure, and PeakTPS that median tps.
	Peak    int32   `json:"peak"`
	PeakTPS float64 `json:"peakTPS"`
}

// CurvePoint is a transport's figures at one point of a sweep.
type CurvePoint struct {
	Value int32 `json:"value"`
	// Runs is how many runs of the point count.
	Runs int32 `json:"runs"`
	// TPS is the median tps over the point's runs, and TPSLow and TPSHigh the distribution-free
	// interval of that median at Confidence (the fewest runs bound it with less than 95 %: 3 runs
	// give their range at 75 %).
	TPS float64 `json:"tps"`
	// +optional
	TPSLow *float64 `json:"tpsLow,omitempty"`
	// +optional
	TPSHigh *float64 `json:"tpsHigh,omitempty"`
	// +optional
	Confidence float64 `json:"confidence,omitempty"`
	// LatencyAvgMs is the median of the runs' mean latency; P50Ms and P99Ms the merged
	// histogram's percentiles, when its samples support them.
	LatencyAvgMs float64 `json:"latencyAvgMs"`
	// +optional
	P50Ms *float64 `json:"p50Ms,omitempty"`
	// +optional
	P99Ms *float64 `json:"p99Ms,omitempty"`
	// Gain is this point's figure over the previous point's, round by round, with its interval
	// and verdict; absent at the first point.
	// +optional
	Gain *Comparison `json:"gain,omitempty"`
	// Limiter is the part that ran out in most of the point's runs, with how many, e.g.
	// "client in 3/3 runs"; absent when none did.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Limiter string `json:"limiter,omitempty"`
}

// RunOrderStatus is the order a benchmark runs its transports in, recorded when it starts.
type RunOrderStatus struct {
	// Order is spec.load.order with its default applied.
	Order RunOrder `json:"order"`
	// Seed is the seed of the random order: spec.load.seed, or the one derived from the UID.
	Seed int64 `json:"seed"`
	// Rounds lists the transports in the order they run, one entry per round for an interleaved
	// benchmark (e.g. "tls ssh direct"), one entry for a sequential one; a sweep's entries name
	// transport and point (e.g. "ssh@4 direct@1 ssh@1 direct@4").
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=1800
	Rounds []string `json:"rounds"`
}

// BestTransport is the answer to "which path is fastest", only as strong as the repetitions allow.
type BestTransport struct {
	// Transport is the transport with the highest median tps (MB/s for a copy load).
	Transport string `json:"transport"`
	// TPS is its median transactions per second; zero for a copy load.
	TPS float64 `json:"tps"`
	// MBPerSecond is its median MB/s, for a copy load.
	// +optional
	MBPerSecond float64 `json:"mbPerSecond,omitempty"`
	// RoundedTPS is TPS rounded to a whole number, for the printer column.
	RoundedTPS int64 `json:"roundedTPS"`
	// Significant is true when the transport is faster than every other at 95 %: each paired
	// interval of the others' tps over its own lies below 1.
	Significant bool `json:"significant"`
	// Ties names the transports that cannot be told apart from Transport (their interval
	// contains 1, or there was one repetition), Transport first; empty when Significant.
	// +optional
	Ties []string `json:"ties,omitempty"`
	// Summary is the answer in words, e.g. "direct" or "tie: direct, tls".
	Summary string `json:"summary"`
}

// Spread is how a figure varied over a transport's repetitions.
type Spread struct {
	// Median is the middle repetition's figure (the mean of the two middle ones for an even
	// count): the figure reported, since one disturbed repetition moves it less than the mean.
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// CV is the coefficient of variation (sample standard deviation over mean); unset with one
	// repetition.
	// +optional
	CV *float64 `json:"cv,omitempty"`
}

// Verdict is what the paired repetitions let a report claim about a transport against the
// baseline at 95 %.
// +kubebuilder:validation:Enum=faster;slower;indistinguishable;baseline
type Verdict string

// Verdicts of a comparison.
const (
	VerdictFaster            Verdict = "faster"
	VerdictSlower            Verdict = "slower"
	VerdictIndistinguishable Verdict = "indistinguishable"
	VerdictBaseline          Verdict = "baseline"
)

// Comparison is a transport's tps against the baseline's (the first transport), round by round.
type Comparison struct {
	// Baseline is the transport compared with.
	Baseline string `json:"baseline"`
	// Ratio is the geometric mean over paired rounds of this transport's tps over the baseline's
	// (unpaired: the ratio of the geometric means).
	Ratio float64 `json:"ratio"`
	// Lower and Upper bound the ratio's confidence interval (Student's t on the log-ratios of the
	// paired rounds, or Welch's on the log rates when unpaired), at 95 % or higher when adjusted
	// across the transports (Holm); unset with one pair.
	// +optional
	Lower *float64 `json:"lower,omitempty"`
	// +optional
	Upper *float64 `json:"upper,omitempty"`
	// Pairs is the number of rounds compared (unpaired: the fewer runs of the two sides).
	Pairs int32 `json:"pairs"`
	// Verdict: faster or slower when the whole interval lies above or below 1, indistinguishable
	// when it contains 1 or there is no interval, baseline for the baseline itself.
	Verdict Verdict `json:"verdict"`
	// Reason says why, e.g. "95% interval [0.712, 0.803] over 3 repetitions lies below 1".
	Reason string `json:"reason"`
	// Level is the confidence level of Lower and Upper: 0.95, or higher for a transport whose
	// verdict was adjusted with the others' (Holm).
	// +optional
	Level float64 `json:"level,omitempty"`
	// Method is how the runs were compared: paired (round i with round i of the baseline, an
	// interleaved benchmark) or unpaired (Welch's interval on all runs of either, a sequential one).
	// +optional
	Method ComparisonMethod `json:"method,omitempty"`
	// MixedPlacement is true when this transport's runs and the baseline's did not run on the same
	// nodes (runner, server): the ratio then mixes a difference of placement with the path's.
	// +optional
	MixedPlacement bool `json:"mixedPlacement,omitempty"`
}

// ComparisonMethod is how a transport's runs are compared with the baseline's.
// +kubebuilder:validation:Enum=paired;unpaired
type ComparisonMethod string

const (
	// MethodPaired compares round i with round i of the baseline (Student's t on log-ratios).
	MethodPaired ComparisonMethod = "paired"
	// MethodUnpaired compares all runs of either side (Welch's t on log rates).
	MethodUnpaired ComparisonMethod = "unpaired"
)

// LatencyDistribution is where a transport's transaction latencies lie, in milliseconds. Each
// percentile is within 0.1 % of the exact order statistic of the logged transactions, and given
// only when at least 10 of them lie beyond it (p99 needs 1,000 samples, p99.9 10,000): with fewer
// it is one or two transactions' latency, and Unsupported names it instead.
type LatencyDistribution struct {
	P50Ms float64 `json:"p50Ms"`
	// +optional
	P90Ms *float64 `json:"p90Ms,omitempty"`
	// +optional
	P99Ms *float64 `json:"p99Ms,omitempty"`
	// +optional
	P999Ms *float64 `json:"p999Ms,omitempty"`
	MaxMs  float64  `json:"maxMs"`
	// Samples is the number of latencies behind the figures.
	Samples int64 `json:"samples"`
	// EffectiveSamples is what the samples are worth once weighted by their runs' sampling rates
	// (Kish's effective sample size; Samples when every run logged at the same rate): the evidence
	// the percentiles rest on.
	// +optional
	EffectiveSamples int64 `json:"effectiveSamples,omitempty"`
	// Unsupported names the percentiles left out for want of samples, e.g. ["p99.9"].
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MaxLength=8
	// +optional
	Unsupported []string `json:"unsupported,omitempty"`
	// SamplingRate is the lowest pgbench --sampling-rate of the runs: the fraction of
	// transactions logged (1 unless a run would have logged more than half a million). The runs
	// are merged weighted by their transactions, each sample counting 1/rate.
	SamplingRate float64 `json:"samplingRate"`
	// FailedSampled and SkippedSampled count logged transactions that failed or were skipped:
	// they have no latency and are not in the percentiles.
	// +optional
	FailedSampled int64 `json:"failedSampled,omitempty"`
	// +optional
	SkippedSampled int64 `json:"skippedSampled,omitempty"`
}

// RunSeries is one run's tps over time.
type RunSeries struct {
	// Round is the run's repetition.
	Round int32 `json:"round"`
	// Seconds is each point's end, in seconds from the start of the measured run.
	Seconds []float64 `json:"seconds"`
	// TPS is each point's transactions per second.
	TPS []float64 `json:"tps"`
}

// Steadiness is how still a run's tps held.
type Steadiness struct {
	// Change is the least-squares trend's change of tps across the run over its mean (+0.2: it
	// climbed by a fifth).
	Change float64 `json:"change"`
	// Steady is false when the change is beyond 10 % and beyond the noise of the reports (the
	// slope's t past its 99.5 % quantile).
	Steady bool `json:"steady"`
	// SettledAfterSeconds, for a run that was not steady, is the time from its start after which
	// the rest was; absent when it never settled.
	// +optional
	SettledAfterSeconds *float64 `json:"settledAfterSeconds,omitempty"`
}

// OpenLoopRun is how an open-loop run kept its schedule.
type OpenLoopRun struct {
	// RateTPS is the rate asked (transactions per second, the whole run).
	RateTPS int32 `json:"rateTPS"`
	// ScheduleLagMs and ScheduleLagMaxMs are how late transactions started against their
	// schedule, on average and at most: what a closed loop would have hidden.
	ScheduleLagMs    float64 `json:"scheduleLagMs"`
	ScheduleLagMaxMs float64 `json:"scheduleLagMaxMs"`
	// Skipped counts transactions skipped because they were already spec.load.latencyLimit
	// behind their schedule; they are not in Transactions.
	Skipped int64 `json:"skipped"`
	// Late counts the transactions that lasted longer than spec.load.latencyLimit, when set.
	// +optional
	Late *int64 `json:"late,omitempty"`
}

// RunResult is one repetition of a transport.
type RunResult struct {
	// Round is the repetition's number, from 1.
	Round int32 `json:"round"`
	// Job is the Job that ran it.
	Job string `json:"job"`
	// TPS and LatencyAvgMs are pgbench's figures for this run.
	TPS          float64 `json:"tps"`
	LatencyAvgMs float64 `json:"latencyAvgMs"`
	// ConnectionTimeMs is pgbench's "initial connection time": how long the clients took to connect
	// before the load, each thread opening its clients one after another (the clients' start-up,
	// not one connection's cost; that is the setup probe, a storm or reconnect). With
	// spec.load.reconnect it is pgbench's average time to open one connection.
	ConnectionTimeMs float64 `json:"connectionTimeMs"`
	// Transactions and FailedTransactions are this run's counts.
	Transactions       int64 `json:"transactions"`
	FailedTransactions int64 `json:"failedTransactions"`
	// SerializationFailures and DeadlockFailures are pgbench's causes of the failed transactions.
	// +optional
	SerializationFailures int64 `json:"serializationFailures,omitempty"`
	// +optional
	DeadlockFailures int64 `json:"deadlockFailures,omitempty"`
	// Steadiness is whether the run's tps held still while it was measured, judged from pgbench's
	// progress reports (at least 5); absent with fewer.
	// +optional
	Steadiness *Steadiness `json:"steadiness,omitempty"`
	// OpenLoop is set for a run at a fixed rate (spec.load.rate): its schedule as pgbench kept it.
	// Its figure is its mean latency, which counts from each transaction's scheduled start.
	// +optional
	OpenLoop *OpenLoopRun `json:"openLoop,omitempty"`
	// Node is the node the runner pod ran on.
	// +optional
	Node string `json:"node,omitempty"`
	// ServerNode is the node of the server's pod when the operator can see it (a CloudNativePG
	// primary, the pod behind an external server's Service), at the run's end.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServerNode string `json:"serverNode,omitempty"`
	// PeerNode is the node of the transport's peer next to the server (the SSH gateway, a shared
	// PgBouncer), when it has one.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	PeerNode string `json:"peerNode,omitempty"`
	// CycleMs is the time each client took per transaction, clients ÷ tps (Little's law), for a
	// closed loop without reconnection: pgbench's mean latency comes close to it, and far below it
	// is not believed (condition LatencyInconsistent).
	// +optional
	CycleMs *float64 `json:"cycleMs,omitempty"`
	// P99Ms is this run's 99th percentile latency in milliseconds.
	// +optional
	P99Ms *float64 `json:"p99Ms,omitempty"`
	// StartTime and EndTime bound the measured pgbench run (after the warm-up).
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
	// MBPerSecond and RowsPerSecond are a copy run's throughput.
	// +optional
	MBPerSecond *float64 `json:"mbPerSecond,omitempty"`
	// +optional
	RowsPerSecond *float64 `json:"rowsPerSecond,omitempty"`
	// Link is the path as this run's runner measured it before the load, when a link is emulated.
	// +optional
	Link *MeasuredLink `json:"link,omitempty"`
	// Cost is what the parts of the path consumed during the measured window, each from its own
	// cgroup accounting; a part whose accounting could not be read is absent, never guessed.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Cost []PartCost `json:"cost,omitempty"`
	// Wire is what crossed the runner pod's network interfaces during the window: the path's bytes
	// after its tunnels' encryption and compression.
	// +optional
	Wire *WireCost `json:"wire,omitempty"`
	// Setup is a connection's setup through the path, phase by phase, probed by the runner after
	// the window.
	// +optional
	Setup *ConnectionSetup `json:"setup,omitempty"`
	// Unmeasured are the parts whose CPU is not known, with why (the server's when the operator
	// cannot see its pod or no node reader runs on its node; a part sampled too far from the
	// window's ends).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Unmeasured []UnmeasuredPart `json:"unmeasured,omitempty"`
	// Limiter is the part that ran out first, with the evidence, when one did by the documented
	// thresholds; absent when none of the parts measured did.
	// +optional
	Limiter *Limiter `json:"limiter,omitempty"`
	// WindowSeconds, for a run of several runner pods, is the length of the stretch every pod was
	// loading the server (from the latest pod's first transaction to the earliest pod's last):
	// the run's and each pod's tps and transactions are counted within it.
	// +optional
	WindowSeconds *float64 `json:"windowSeconds,omitempty"`
	// Pods are each runner pod's own figures when the run ran in several (spec.runner.pods).
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Pods []PodRun `json:"pods,omitempty"`
}

// PodRun is one runner pod's part of a run of several.
type PodRun struct {
	// Index is the pod's index in the Job, from 0.
	Index int32 `json:"index"`
	// Node is where it ran.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Node string `json:"node,omitempty"`
	// TPS and Transactions are its figures within the run's common window (windowSeconds), or
	// its pgbench's where the window is not known; LatencyAvgMs is its pgbench's.
	TPS          float64 `json:"tps"`
	Transactions int64   `json:"transactions"`
	LatencyAvgMs float64 `json:"latencyAvgMs"`
	// StartOffsetMs is how long after the run's first pod this one started its measured load.
	StartOffsetMs float64 `json:"startOffsetMs"`
}

// Parts of a path whose cost is measured.
const (
	// PartClient is pgbench and the runner, in the runner pod's own container.
	PartClient = "client"
	// PartNetwork is the link, as a limiter: the run was paced by its round trip.
	PartNetwork = "network"
	// PartNode is the runner's node, as a limiter: the parts on it used its cores together.
	PartNode = "node"
	// PartServer is the server's pod: a CloudNativePG primary, or the pod behind an external
	// server's Service, read through the node reader of its node.
	PartServer = "server"
)

// WireCost is the bytes a run put on the network from the runner's pod (loopback aside), read from
// the pod's interface counters at the ends of the measured window.
type WireCost struct {
	ReceivedBytes int64 `json:"receivedBytes"`
	SentBytes     int64 `json:"sentBytes"`
	// BytesPerTransaction is both directions' bytes per transaction the run completed.
	// +optional
	BytesPerTransaction *float64 `json:"bytesPerTransaction,omitempty"`
	// BytesPerRow is both directions' bytes per row of a copy run.
	// +optional
	BytesPerRow *float64 `json:"bytesPerRow,omitempty"`
}

// ConnectionSetup is the median time of each phase of a new connection through the path, over
// Probes connections the runner opened after the measured window (the path as the load left it:
// a pooler's server connections open).
type ConnectionSetup struct {
	Probes int32 `json:"probes"`
	// ResolveMs is the host name's resolution (a Service's DNS name; nothing for an address).
	ResolveMs float64 `json:"resolveMs"`
	// TCPMs is the TCP connection to the path's first hop: the server, or a tunnel's or a sidecar
	// pooler's loopback end (whose own connection onward comes later, in the startup).
	TCPMs float64 `json:"tcpMs"`
	// TLSMs is PostgreSQL's SSLRequest and the TLS handshake; about 0 without TLS.
	TLSMs float64 `json:"tlsMs"`
	// StartupMs is the rest: the startup message, authentication (SCRAM, md5, trust, a
	// certificate), the backend's start; through a pooler, its login; through a tunnel, the
	// tunnel's connection onward.
	StartupMs float64 `json:"startupMs"`
	// TotalMs is the whole connection's median.
	TotalMs float64 `json:"totalMs"`
}

// UnmeasuredPart is a part of the path whose CPU over a run's window is not known, and why.
type UnmeasuredPart struct {
	// +kubebuilder:validation:MaxLength=63
	Part string `json:"part"`
	// +kubebuilder:validation:MaxLength=256
	Reason string `json:"reason"`
}

// PartCost is what one part of the path consumed during a run's measured window.
type PartCost struct {
	// Part names it: client (pgbench and the runner).
	// +kubebuilder:validation:MaxLength=63
	Part string `json:"part"`
	// CPUSeconds is its CPU time, user and system, over the window.
	CPUSeconds float64 `json:"cpuSeconds"`
	// CPUMicrosPerTransaction is CPUSeconds per transaction the run completed, in microseconds.
	// +optional
	CPUMicrosPerTransaction *float64 `json:"cpuMicrosPerTransaction,omitempty"`
	// Cores is the CPU it could use: its CPU limit, else its node's allocatable CPU.
	// +optional
	Cores *float64 `json:"cores,omitempty"`
	// Utilization is CPUSeconds over the window's length times Cores: 1 is all it could use.
	// +optional
	Utilization *float64 `json:"utilization,omitempty"`
	// ThrottledFraction is the share of the scheduler's periods under its CPU limit in which it
	// ran out of its quota, and ThrottledSeconds how long it waited; both only under a limit.
	// +optional
	ThrottledFraction *float64 `json:"throttledFraction,omitempty"`
	// +optional
	ThrottledSeconds *float64 `json:"throttledSeconds,omitempty"`
}

// Limiter is the part of the path that ran out during a run.
type Limiter struct {
	// Part is the part's name, as in cost.
	// +kubebuilder:validation:MaxLength=63
	Part string `json:"part"`
	// Evidence says which figure crossed which threshold.
	// +kubebuilder:validation:MaxLength=1024
	Evidence string `json:"evidence"`
}

// TransportResult is what pgbench measured through one transport.
type TransportResult struct {
	// Transport is the transport's name.
	Transport string `json:"transport"`
	// Type is the transport's type.
	Type TransportType `json:"type"`
	// Job is the name of the Job that ran pgbench.
	Job string `json:"job"`

	// Runs holds each repetition's own figures, in the order they ran.
	// +optional
	Runs []RunResult `json:"runs,omitempty"`
	// Repetitions counts the runs done, of spec.load.repetitions.
	Repetitions int32 `json:"repetitions"`

	// TPS is the median over the repetitions of transactions per second as pgbench reports it:
	// without the initial connection time, or, with spec.load.reconnect, including the
	// reconnection times (pgbench 14+ reports nothing else in that mode).
	TPS float64 `json:"tps"`
	// TPSSpread is how tps varied over the repetitions.
	// +optional
	TPSSpread *Spread `json:"tpsSpread,omitempty"`
	// LatencySpread is how the average latency (milliseconds) varied over the repetitions.
	// +optional
	LatencySpread *Spread `json:"latencySpread,omitempty"`
	// Comparison is this transport's tps against the baseline's, with its interval and verdict.
	// +optional
	Comparison *Comparison `json:"comparison,omitempty"`
	// Latency is the distribution of transaction latencies over every repetition: the runs' HDR
	// histograms (from pgbench's transaction logs) merged, never averaged.
	// +optional
	Latency *LatencyDistribution `json:"latency,omitempty"`
	// Link is the transport's emulated link, asked and measured.
	// +optional
	Link *LinkResult `json:"link,omitempty"`
	// Series is tps over time, per run, from pgbench's progress reports: at most 120 points per
	// transport, each the mean of consecutive intervals when a run reported more.
	// +optional
	Series []RunSeries `json:"series,omitempty"`
	// TPSIncludingConnections is tps including connection time; only set when pgbench printed it
	// (with spec.load.reconnect).
	// +optional
	TPSIncludingConnections *float64 `json:"tpsIncludingConnections,omitempty"`
	// LatencyAvgMs is the median over the repetitions of the average transaction latency in
	// milliseconds.
	LatencyAvgMs float64 `json:"latencyAvgMs"`
	// LatencyStddevMs is the latest run's latency standard deviation in milliseconds.
	// +optional
	LatencyStddevMs *float64 `json:"latencyStddevMs,omitempty"`
	// ConnectionTimeMs is the runs' median of pgbench's initial connection time in milliseconds:
	// every client connecting before the load (the clients' start-up, not one connection's cost;
	// see runs[].setup, connectionStorm or spec.load.reconnect), or with spec.load.reconnect the
	// average time to open one connection.
	ConnectionTimeMs float64 `json:"connectionTimeMs"`
	// Transactions actually processed, over all repetitions.
	Transactions int64 `json:"transactions"`
	// FailedTransactions counts transactions that ended in an error, over all repetitions.
	FailedTransactions int64 `json:"failedTransactions"`

	// TLS is what the runner's own session negotiated with the server, read from pg_stat_ssl.
	// +optional
	TLS *NegotiatedTLS `json:"tls,omitempty"`

	// SSH is what the tunnels negotiated with the gateway, read from ssh's own verbose log.
	// +optional
	SSH *NegotiatedSSH `json:"ssh,omitempty"`

	// Tunnels holds each tunnel's own figures when the transport ran several.
	// +optional
	Tunnels []TunnelResult `json:"tunnels,omitempty"`

	// ConnectionsPerSecond, with spec.load.reconnect, is how many connections pgbench opened per
	// second: one per transaction, failed ones included.
	// +optional
	ConnectionsPerSecond *float64 `json:"connectionsPerSecond,omitempty"`

	// ConnectionStorm is the result of spec.load.connectionStorm.
	// +optional
	ConnectionStorm *ConnectionStormResult `json:"connectionStorm,omitempty"`

	// Copy is the result of a copy load (spec.load.copy); tps and latency are then zero.
	// +optional
	Copy *CopyResult `json:"copy,omitempty"`

	// Pooler describes both hops of a pooler transport and what the pooler counted.
	// +optional
	Pooler *PoolerResult `json:"pooler,omitempty"`

	// Path says in a few words what the path negotiated and how it was built, as its transport
	// describes the recorded result: the summary and the plugin print it.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Path string `json:"path,omitempty"`

	// Evidence is what the path's own parts counted while the load ran (a tunnel's bytes and
	// handshakes, a proxy's sessions), as its transport reads them.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	// +optional
	Evidence []Evidence `json:"evidence,omitempty"`

	// Command is the pgbench command line that ran. Connection settings come from libpq
	// environment variables; the password never appears here.
	Command string `json:"command"`
	// Connection is the libpq connection string used, without user or password.
	Connection string `json:"connection"`

	// Unguarded marks a run of a benchmark with spec.exclusive false: other benchmarks of the
	// same server may have run at the same time and disturbed it.
	// +optional
	Unguarded bool `json:"unguarded,omitempty"`

	// Provenance is where and with what the run was measured, as observed.
	// +optional
	Provenance *Provenance `json:"provenance,omitempty"`

	// StartTime is when the first repetition's measured run started, EndTime when the latest
	// ended.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`
}

// Provenance records what really ran a transport's measurement.
type Provenance struct {
	// Node is the node the runner pod ran on.
	Node string `json:"node,omitempty"`
	// ServerNode is the node of the server's pod (the primary of a CloudNativePG cluster) when
	// the operator can know it; empty for an external server.
	ServerNode string `json:"serverNode,omitempty"`
	// SharedNode is true when the runner and the server ran on one node: the client then takes
	// CPU from the server it measures. Unset when the server's node is unknown.
	// +optional
	SharedNode *bool `json:"sharedNode,omitempty"`
	// RunnerImage is the runner container's image as the kubelet reports it (with its digest).
	RunnerImage string `json:"runnerImage,omitempty"`
	// PgbenchVersion is `pgbench --version` in the runner.
	PgbenchVersion string `json:"pgbenchVersion,omitempty"`
	// CPURequest and MemoryLimit are the runner container's resources.
	CPURequest  string `json:"cpuRequest,omitempty"`
	MemoryLimit string `json:"memoryLimit,omitempty"`
}

// NegotiatedTLS is the TLS session the server reports for the runner's connection.
type NegotiatedTLS struct {
	// Version is the protocol version, e.g. TLSv1.3.
	Version string `json:"version"`
	// Cipher is the negotiated cipher suite.
	Cipher string `json:"cipher"`
}

// Evidence is one thing a part of the path counted or negotiated, in words.
type Evidence struct {
	// Name is what it is: "wireguard handshake", "tunnel bytes".
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Value is what it was.
	// +kubebuilder:validation:MaxLength=256
	Value string `json:"value"`
}

// NegotiatedSSH is the SSH session ssh reports ("kex: client->server ...").
type NegotiatedSSH struct {
	Cipher      string `json:"cipher"`
	MAC         string `json:"mac"`
	Compression string `json:"compression"`
	// ClientVersion and ServerVersion are ssh's and the gateway sshd's software versions as they
	// announced them to each other, e.g. "OpenSSH_9.2p1 Debian-2+deb12u3".
	// +optional
	ClientVersion string `json:"clientVersion,omitempty"`
	// +optional
	ServerVersion string `json:"serverVersion,omitempty"`
}

// ConnectionStormResult is what N sequential connect, select 1, disconnect cycles cost.
type ConnectionStormResult struct {
	// Connections opened (successfully).
	Connections int64 `json:"connections"`
	// TotalSeconds is the time the whole storm took.
	TotalSeconds float64 `json:"totalSeconds"`
	// ConnectionsPerSecond is connections divided by the total time.
	ConnectionsPerSecond float64 `json:"connectionsPerSecond"`
	// MeanConnectionMs is the mean time one cycle took: connect, select 1, disconnect.
	MeanConnectionMs float64 `json:"meanConnectionMs"`
	// MeanConnectMs is the mean time to open a connection, as pgbench measures it.
	MeanConnectMs float64 `json:"meanConnectMs"`
	// FailedConnections counts cycles that failed.
	FailedConnections int64 `json:"failedConnections"`
	// Command is the pgbench command line that ran.
	Command string `json:"command"`
	// Connect is the time to open a connection with its uncertainty from this one run: the storm
	// runs as batches one after the other (each its own pgbench), and this is the median of
	// their mean connect times with its distribution-free interval.
	// +optional
	Connect *MedianInterval `json:"connect,omitempty"`
}

// MedianInterval is a median with a distribution-free interval around it.
type MedianInterval struct {
	// Median, Low and High are in the figure's unit (milliseconds for a time).
	Median float64 `json:"median"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	// Confidence is the interval's coverage: 1 - 2/2^n for the min–max of n values.
	Confidence float64 `json:"confidence"`
	// Samples is how many values the interval is made of.
	Samples int32 `json:"samples"`
}

// PoolerResult records how a pooler transport was set up and what the pooler saw.
type PoolerResult struct {
	// Implementation is "PgBouncer" (the operator's own) or "CloudNativePG Pooler".
	Implementation string `json:"implementation"`
	// Placement is service or sidecar.
	Placement PoolerPlacement `json:"placement"`
	// PoolMode is session or transaction.
	PoolMode PoolMode `json:"poolMode"`
	// ClientHop is pgbench to pooler.
	ClientHop Hop `json:"clientHop"`
	// ServerHop is pooler to server.
	ServerHop Hop `json:"serverHop"`
	// Transactions is how many transactions the pooler's SHOW STATS counted during the latest run: the
	// evidence that the traffic went through it. Not available for a CloudNativePG Pooler.
	// +optional
	Transactions *int64 `json:"transactions,omitempty"`
	// Version is the pooler's version as its admin console reports it (SHOW VERSION), e.g.
	// "PgBouncer 1.18.0"; unknown for a CloudNativePG Pooler.
	// +optional
	Version string `json:"version,omitempty"`
	// ServerConnections is how many connections to the server the pooler held at the end of the
	// latest run (SHOW SERVERS).
	// +optional
	ServerConnections *int32 `json:"serverConnections,omitempty"`
}

// Hop is one hop of a pooled path.
type Hop struct {
	// Auth is how the connecting side authenticates on this hop: scram-sha-256, trust, password
	// (PgBouncer answers the server's challenge, SCRAM or MD5 as the server's pg_hba.conf asks,
	// with the password from the credentials Secret) or cert.
	Auth string `json:"auth"`
	// TLS is the negotiated protocol and cipher, e.g. "TLSv1.3/TLS_AES_256_GCM_SHA384", or
	// "none" for plain TCP.
	TLS string `json:"tls"`
}

// TunnelResult is one tunnel's pgbench figures.
type TunnelResult struct {
	Tunnel             int32   `json:"tunnel"`
	TPS                float64 `json:"tps"`
	LatencyAvgMs       float64 `json:"latencyAvgMs"`
	Transactions       int64   `json:"transactions"`
	FailedTransactions int64   `json:"failedTransactions"`
}

// TunnelBenchmark compares what each network path between a client and PostgreSQL costs.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tb,categories=tunnelbench
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 63",message="metadata.name must be at most 63 characters: it is the value of the tunnelbench.io/benchmark label on every object the operator makes for the benchmark"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="Queued, Pending, Initializing, Running, Completed, Failed or Cancelled"
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress`,description="runs done of runs planned"
// +kubebuilder:printcolumn:name="Planned",type=string,JSONPath=`.status.plannedRunTime`,description="the measured runs' least time: runs × (warm-up + duration), pods' start excluded"
// +kubebuilder:printcolumn:name="Running",type=string,JSONPath=`.status.live.transport`,description="the transport running now"
// +kubebuilder:printcolumn:name="Best",type=string,JSONPath=`.status.best.summary`,description="the fastest transport, or a tie when the intervals cannot tell"
// +kubebuilder:printcolumn:name="Best TPS",type=integer,JSONPath=`.status.best.roundedTPS`,description="the best transport's median tps, rounded"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`,description="since the benchmark was created"
type TunnelBenchmark struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to compare: the server, the transports and the load, and how to run them. What
	// it measures (server, transports, runner, load) cannot change once created; to measure again,
	// rerun it with `kubectl tunnelbench rerun`. See docs/user-guide/benchmark.md.
	// +kubebuilder:validation:XValidation:rule="!has(oldSelf.cancel) || !oldSelf.cancel || (has(self.cancel) && self.cancel)",message="spec.cancel cannot be undone: a cancelled benchmark stays cancelled; create a new one (kubectl tunnelbench rerun)"
	// +kubebuilder:validation:XValidation:rule="self.server == oldSelf.server && self.transports == oldSelf.transports && has(self.runner) == has(oldSelf.runner) && (!has(self.runner) || self.runner == oldSelf.runner) && has(self.tls) == has(oldSelf.tls) && (!has(self.tls) || self.tls == oldSelf.tls) && has(self.timeout) == has(oldSelf.timeout) && (!has(self.timeout) || duration(self.timeout) == duration(oldSelf.timeout)) && has(self.exclusive) == has(oldSelf.exclusive) && (!has(self.exclusive) || self.exclusive == oldSelf.exclusive) && has(self.network) == has(oldSelf.network) && (!has(self.network) || self.network == oldSelf.network) && has(self.sweep) == has(oldSelf.sweep) && (!has(self.sweep) || self.sweep == oldSelf.sweep)",message="spec is immutable: delete and re-create the TunnelBenchmark to run it again"
	// +kubebuilder:validation:XValidation:rule="has(self.load.builtin) == has(oldSelf.load.builtin) && (!has(self.load.builtin) || self.load.builtin == oldSelf.load.builtin) && has(self.load.script) == has(oldSelf.load.script) && (!has(self.load.script) || self.load.script == oldSelf.load.script) && self.load.clients == oldSelf.load.clients && self.load.threads == oldSelf.load.threads && has(self.load.transactions) == has(oldSelf.load.transactions) && (!has(self.load.transactions) || self.load.transactions == oldSelf.load.transactions) && has(self.load.duration) == has(oldSelf.load.duration) && (!has(self.load.duration) || duration(self.load.duration) == duration(oldSelf.load.duration)) && has(self.load.protocol) == has(oldSelf.load.protocol) && (!has(self.load.protocol) || self.load.protocol == oldSelf.load.protocol) && (has(self.load.reconnect) && self.load.reconnect) == (has(oldSelf.load.reconnect) && oldSelf.load.reconnect) && has(self.load.scale) == has(oldSelf.load.scale) && (!has(self.load.scale) || self.load.scale == oldSelf.load.scale) && (has(self.load.initialize) && self.load.initialize) == (has(oldSelf.load.initialize) && oldSelf.load.initialize) && has(self.load.progressInterval) == has(oldSelf.load.progressInterval) && (!has(self.load.progressInterval) || duration(self.load.progressInterval) == duration(oldSelf.load.progressInterval)) && has(self.load.connectionStorm) == has(oldSelf.load.connectionStorm) && (!has(self.load.connectionStorm) || self.load.connectionStorm == oldSelf.load.connectionStorm) && has(self.load.repetitions) == has(oldSelf.load.repetitions) && (!has(self.load.repetitions) || self.load.repetitions == oldSelf.load.repetitions) && has(self.load.order) == has(oldSelf.load.order) && (!has(self.load.order) || self.load.order == oldSelf.load.order) && has(self.load.seed) == has(oldSelf.load.seed) && (!has(self.load.seed) || self.load.seed == oldSelf.load.seed) && has(self.load.rate) == has(oldSelf.load.rate) && (!has(self.load.rate) || self.load.rate == oldSelf.load.rate) && has(self.load.latencyLimit) == has(oldSelf.load.latencyLimit) && (!has(self.load.latencyLimit) || duration(self.load.latencyLimit) == duration(oldSelf.load.latencyLimit)) && has(self.load.warmup) == has(oldSelf.load.warmup) && (!has(self.load.warmup) || duration(self.load.warmup) == duration(oldSelf.load.warmup)) && has(self.load.stallTimeout) == has(oldSelf.load.stallTimeout) && (!has(self.load.stallTimeout) || duration(self.load.stallTimeout) == duration(oldSelf.load.stallTimeout)) && has(self.load.copy) == has(oldSelf.load.copy) && (!has(self.load.copy) || self.load.copy == oldSelf.load.copy)",message="spec is immutable: delete and re-create the TunnelBenchmark to run it again"
	// +kubebuilder:validation:XValidation:rule="!has(self.server.external) || has(self.server.external.caSecret) || self.transports.all(t, t.type != 'tls' || (has(t.tls) && t.tls.sslMode == 'require'))",message="spec.transports: sslMode verify-ca and verify-full need spec.server.external.caSecret"
	// +kubebuilder:validation:XValidation:rule="!has(self.tls) || has(self.server.managed) || self.transports.exists(t, (has(t.pooler) && has(t.pooler.clientTLS) && t.pooler.clientTLS == 'require') || (has(t.tls) && has(t.tls.clientCertificate)))",message="spec.tls.issuerRef issues the server certificate of spec.server.managed, the certificate of a pooler with clientTLS require and tls.clientCertificate: this benchmark has none of them"
	// +kubebuilder:validation:XValidation:rule="has(self.tls) || self.transports.all(t, !has(t.tls) || !has(t.tls.clientCertificate))",message="spec.transports: tls.clientCertificate needs spec.tls.issuerRef to issue it"
	// +kubebuilder:validation:XValidation:rule="self.transports.all(t, !has(t.pooler) || !has(t.pooler.over) || self.transports.exists(o, o.name == t.pooler.over && (o.type == 'ssh' || o.type == 'vpn' || o.type == 'proxy')))",message="spec.transports: pooler.over must name a transport of this benchmark of type ssh, vpn or proxy"
	// +kubebuilder:validation:XValidation:rule="self.transports.all(t, !(t.type == 'vpn' || (has(t.pooler) && has(t.pooler.over) && self.transports.exists(o, o.name == t.pooler.over && o.type == 'vpn'))) || !(has(t.network) ? ((has(t.network.rtt) || has(t.network.bandwidth)) && (!has(t.network.emulator) || t.network.emulator == 'userspace')) : (has(self.network) && (has(self.network.rtt) || has(self.network.bandwidth)) && (!has(self.network.emulator) || self.network.emulator == 'userspace'))))",message="spec.transports: the userspace link emulator is a TCP proxy and cannot carry a vpn transport's WireGuard (UDP), nor a pooler's over one: set network.emulator chaos-mesh for it"
	// +kubebuilder:validation:XValidation:rule="self.transports.all(t, !has(t.pooler) || !has(t.pooler.poolMode) || t.pooler.poolMode != 'transaction' || !has(self.load.protocol) || self.load.protocol != 'prepared')",message="spec.transports: pooler.poolMode transaction cannot run spec.load.protocol prepared: PgBouncer 1.18 does not keep prepared statements across transactions; use poolMode session or protocol extended"
	// +kubebuilder:validation:XValidation:rule="self.transports.all(t, t.type != 'pooler' || (has(t.pooler) && has(t.pooler.maxClientConnections) ? t.pooler.maxClientConnections : 1000) >= (has(self.sweep) && has(self.sweep.clients) ? self.sweep.clients.max() : self.load.clients))",message="spec.transports: pooler.maxClientConnections (default 1000) must be at least spec.load.clients (every point of spec.sweep.clients), or the pooler refuses pgbench's clients"
	// +kubebuilder:validation:XValidation:rule="self.transports.all(t, t.type != 'pooler' || (has(t.pooler) && has(t.pooler.poolMode) && t.pooler.poolMode == 'transaction') || (has(self.sweep) && has(self.sweep.poolSize) ? self.sweep.poolSize.min() : (has(t.pooler) && has(t.pooler.poolSize) ? t.pooler.poolSize : 20)) >= (has(self.sweep) && has(self.sweep.clients) ? self.sweep.clients.max() : self.load.clients))",message="spec.transports: pooler.poolSize (default 20) must be at least spec.load.clients in poolMode session, at every point of spec.sweep.clients: each pgbench client keeps its server connection for its whole session, and the others would wait for one until PgBouncer gives up; use poolMode transaction to share fewer server connections"
	// +kubebuilder:validation:XValidation:rule="!has(self.server.external) || has(self.server.external.caSecret) || self.transports.all(t, !has(t.pooler) || !has(t.pooler.serverTLS) || t.pooler.serverTLS != 'verify-full')",message="spec.transports: pooler.serverTLS verify-full needs spec.server.external.caSecret"
	// +kubebuilder:validation:XValidation:rule="!(has(self.server.cnpg) || has(self.server.managed)) || self.transports.all(t, !has(t.pooler) || !has(t.pooler.serverTLS) || (has(t.pooler.placement) && t.pooler.placement == 'sidecar'))",message="spec.transports: pooler.serverTLS cannot be set for a CloudNativePG Pooler (placement service with a cnpg server): it always uses TLS with its own client certificate"
	// +kubebuilder:validation:XValidation:rule="self.transports.all(t, t.type != 'pooler' || !has(t.pooler) || !has(t.pooler.placement) || t.pooler.placement != 'sidecar' || !has(t.pooler.serverTLS) || t.pooler.serverTLS != 'verify-full' || !(has(t.network) ? (has(t.network.rtt) || has(t.network.bandwidth)) && (!has(t.network.emulator) || t.network.emulator == 'userspace') : has(self.network) && (has(self.network.rtt) || has(self.network.bandwidth)) && (!has(self.network.emulator) || self.network.emulator == 'userspace')))",message="spec.transports: a sidecar pooler with serverTLS verify-full cannot cross the userspace link (PgBouncer would check the server's name against the link proxy's loopback address): use serverTLS require, or emulator chaos-mesh"
	// +kubebuilder:validation:XValidation:rule="self.transports.all(t, !has(t.ssh) || !has(t.ssh.tunnels) || t.ssh.tunnels <= (has(self.sweep) && has(self.sweep.clients) ? self.sweep.clients.min() : self.load.clients))",message="spec.transports: ssh.tunnels must not exceed spec.load.clients (every point of spec.sweep.clients) (each tunnel runs its own pgbench with at least one client)"
	// +kubebuilder:validation:XValidation:rule="!has(self.server.managed) || self.transports.all(t, t.type == 'pooler') || (has(self.sweep) && has(self.sweep.clients) ? self.sweep.clients.max() : self.load.clients) <= (has(self.server.managed.parameters) && 'max_connections' in self.server.managed.parameters && self.server.managed.parameters['max_connections'].matches('^[0-9]{1,6}$') ? int(self.server.managed.parameters['max_connections']) : 100) - 3",message="spec.load.clients must leave 3 of the managed server's max_connections (spec.server.managed.parameters, default 100) to superusers: raise max_connections or lower clients (every point of spec.sweep.clients)"
	// +kubebuilder:validation:XValidation:rule="has(self.load.copy) || has(self.load.transactions) || (has(self.sweep) ? (has(self.sweep.clients) ? size(self.sweep.clients) : (has(self.sweep.tunnels) ? size(self.sweep.tunnels) : size(self.sweep.poolSize))) : 1) * size(self.transports) * (has(self.load.repetitions) ? self.load.repetitions : 3) * ((has(self.load.duration) ? duration(self.load.duration).getSeconds() : 60) + (has(self.load.warmup) ? duration(self.load.warmup).getSeconds() : 5)) <= (has(self.timeout) ? duration(self.timeout).getSeconds() : 1800)",message="spec.timeout is shorter than the runs alone (sweep points × transports × repetitions × (warmup + duration)): raise spec.timeout (default 30m) or shorten the load"
	// +kubebuilder:validation:XValidation:rule="(has(self.sweep) && has(self.sweep.clients)) || self.load.threads <= self.load.clients",message="spec.load.threads must not exceed spec.load.clients (a clients sweep caps threads at each point's clients instead)"
	// +kubebuilder:validation:XValidation:rule="!has(self.runner) || !has(self.runner.pods) || self.runner.pods == 1 || (!has(self.load.copy) && self.transports.all(t, self.runner.pods * (has(self.sweep) && has(self.sweep.tunnels) && t.type == 'ssh' ? self.sweep.tunnels.max() : (has(t.ssh) && has(t.ssh.tunnels) ? t.ssh.tunnels : 1)) <= (has(self.sweep) && has(self.sweep.clients) ? self.sweep.clients.min() : self.load.clients)))",message="spec.runner.pods: every pod needs at least one client per tunnel (spec.load.clients, at every point of a sweep, at least pods × ssh.tunnels), and a copy load runs in one pod"
	// +kubebuilder:validation:XValidation:rule="!has(self.runner) || !has(self.runner.pods) || self.runner.pods == 1 || self.transports.all(t, t.type != 'vpn' || (has(t.vpn) && has(t.vpn.kind) && t.vpn.kind != 'wireguard'))",message="spec.runner.pods: a WireGuard transport runs from one runner pod yet: every pod would hold the same client key and the gateway has one peer, so the pods would take each other's session (each handshake moves the peer's endpoint); use one pod, or vpn.kind openvpn"
	// +kubebuilder:validation:XValidation:rule="!has(self.runner) || !has(self.runner.pods) || self.runner.pods == 1 || ((!has(self.network) || !has(self.network.emulator) || self.network.emulator != 'chaos-mesh') && self.transports.all(t, !has(t.network) || !has(t.network.emulator) || t.network.emulator != 'chaos-mesh'))",message="spec.runner.pods: several runner pods cannot cross a chaos-mesh link yet (the operator awaits its injection for one pod): use the userspace emulator"
	// +kubebuilder:validation:XValidation:rule="!has(self.sweep) || !has(self.load.copy)",message="spec.sweep does not apply to a copy load: a copy has no clients or tunnels to sweep"
	// +kubebuilder:validation:XValidation:rule="!has(self.sweep) || !has(self.sweep.poolSize) || (self.transports.exists(t, t.type == 'pooler') && self.transports.all(t, t.type != 'pooler' || (has(t.pooler) && has(t.pooler.placement) && t.pooler.placement == 'sidecar')))",message="spec.sweep.poolSize needs pooler transports, every one with placement sidecar: a shared pooler (placement service) is one PgBouncer for every point, which the sweep cannot resize between runs"
	// +kubebuilder:validation:XValidation:rule="!has(self.sweep) || !has(self.sweep.tunnels) || self.transports.exists(t, t.type == 'ssh')",message="spec.sweep.tunnels needs a transport of type ssh: it sweeps their ssh.tunnels"
	// +kubebuilder:validation:XValidation:rule="!has(self.sweep) || !has(self.sweep.tunnels) || self.sweep.tunnels.max() <= self.load.clients",message="spec.sweep.tunnels must not exceed spec.load.clients at any point (each tunnel runs its own pgbench with at least one client)"
	// +kubebuilder:validation:XValidation:rule="(has(self.sweep) ? (has(self.sweep.clients) ? size(self.sweep.clients) : (has(self.sweep.tunnels) ? size(self.sweep.tunnels) : size(self.sweep.poolSize))) : 1) * size(self.transports) * (has(self.load.repetitions) ? self.load.repetitions : 3) <= 320",message="spec.sweep: points × transports × repetitions must be at most 320, the runs one benchmark's status holds; split the sweep over several benchmarks"
	// +kubebuilder:validation:XValidation:rule="(has(self.sweep) ? (has(self.sweep.clients) ? size(self.sweep.clients) : (has(self.sweep.tunnels) ? size(self.sweep.tunnels) : size(self.sweep.poolSize))) : 1) * size(self.transports) <= 24",message="spec.sweep: points × transports must be at most 24, the curves one benchmark's status holds; split the sweep over several benchmarks"
	Spec TunnelBenchmarkSpec `json:"spec"`
	// The rules above compare durations as durations, not strings: Go clients write "30m0s" for
	// "30m". Immutability sits on the benchmark's spec, not on its types: a
	// ScheduledTunnelBenchmark's template is a TunnelBenchmarkSpec that may change. (Apart from
	// the field's doc comment, so that kubectl explain and the API reference do not show it.)

	// +optional
	Status TunnelBenchmarkStatus `json:"status,omitempty"`
}

// TunnelBenchmarkList is a list of TunnelBenchmarks.
// +kubebuilder:object:root=true
type TunnelBenchmarkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TunnelBenchmark `json:"items"`
}
