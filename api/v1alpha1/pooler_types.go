package v1alpha1

import (
	"cmp"
)

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
	// Implementation is the pooler: pgbouncer (PostgreSQL's; the default for spec.server.engine
	// postgresql) or mysqlpool (TunnelBench's own MySQL pooler, which multiplexes as ProxySQL
	// does: it logs clients in itself and lends a server connection per statement or
	// transaction; the default, and the only one, for spec.server.engine mysql).
	// +optional
	Implementation PoolerImplementation `json:"implementation,omitempty"`

	// Placement is service (default: a pooler next to the server, behind a Service) or sidecar
	// (the pooler inside the client pod, as a native sidecar).
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

// PoolerImplementation names a pooler.
// +kubebuilder:validation:Enum=pgbouncer;mysqlpool
type PoolerImplementation string

const (
	// PoolerPgBouncer is PgBouncer, for PostgreSQL.
	PoolerPgBouncer PoolerImplementation = "pgbouncer"
	// PoolerMySQLPool is TunnelBench's MySQL pooler (tunnelbench-runner mysqlpool), for MySQL
	// and MariaDB: a sidecar in the runner pod or a Deployment next to the server, pooling per
	// transaction.
	PoolerMySQLPool PoolerImplementation = "mysqlpool"
)

// EffectiveImplementation is the pooler a transport to a server of engine gets: the one it
// names, else the engine's own.
func (p PoolerTransport) EffectiveImplementation(engine Engine) PoolerImplementation {
	if p.Implementation != "" {
		return p.Implementation
	}
	if engine == EngineMySQL {
		return PoolerMySQLPool
	}
	return PoolerPgBouncer
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
