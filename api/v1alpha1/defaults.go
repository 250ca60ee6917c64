package v1alpha1

import "time"

// Defaults of the API, in Go. The schema carries the same values as kubebuilder default markers
// where it can; these serve where it cannot: a block the user omitted entirely (the apiserver
// defaults fields only inside a present object) and objects built by Go clients. A test reads
// the generated CRD and fails when a marker or a CEL fallback disagrees with a value here.
const (
	// DefaultDuration is each run's duration when neither duration nor transactions is set.
	DefaultDuration = 60 * time.Second
	// DefaultClients, DefaultThreads, DefaultProtocol and DefaultScale complete spec.load.
	DefaultClients  = int32(1)
	DefaultThreads  = int32(1)
	DefaultProtocol = Protocol("simple")
	DefaultScale    = int32(1)
	// DefaultProgressInterval is pgbench's -P when spec.load.progressInterval is not set.
	DefaultProgressInterval = 5 * time.Second
	// DefaultStallTimeout is spec.load.stallTimeout when it is not set.
	DefaultStallTimeout = 30 * time.Second
	// DefaultRepetitions, DefaultOrder and DefaultWarmup say how often, in which order and after
	// how long a discarded warm-up each transport is measured.
	DefaultRepetitions = int32(3)
	DefaultOrder       = OrderInterleaved
	DefaultWarmup      = 5 * time.Second
	// DefaultCopyData is what a copy load moves when spec.load.copy.data is not set.
	DefaultCopyData = CopyText
	// DefaultTimeout bounds a whole benchmark when spec.timeout is not set.
	DefaultTimeout = 30 * time.Minute
	// DefaultDatabase is the database CloudNativePG bootstraps, and so the one a CloudNativePG
	// server is benchmarked in unless told otherwise.
	DefaultDatabase = "app"
	// DefaultPort is PostgreSQL's port, of an external server and of CloudNativePG's Services.
	DefaultPort = int32(5432)
	// DefaultMySQLPort is a MySQL-protocol server's port, of an external server of engine mysql.
	DefaultMySQLPort = int32(3306)

	// DefaultInstances and DefaultStorageSize shape a managed CloudNativePG Cluster.
	DefaultInstances   = int32(1)
	DefaultStorageSize = "1Gi"

	// DefaultIssuerKind and DefaultIssuerGroup complete spec.tls.issuerRef.
	DefaultIssuerKind  = "Issuer"
	DefaultIssuerGroup = "cert-manager.io"

	// DefaultPoolerPlacement, DefaultPoolMode, DefaultPoolSize, DefaultMaxClientConnections,
	// DefaultPoolerClientTLS and DefaultPoolerServerTLS are a pooler transport's settings.
	DefaultPoolerPlacement      = PoolerService
	DefaultPoolMode             = PoolModeSession
	DefaultPoolSize             = int32(20)
	DefaultMaxClientConnections = int32(1000)
	DefaultPoolerClientTLS      = ClientTLSDisable
	DefaultPoolerServerTLS      = ServerTLSRequire

	// DefaultTunnels is the number of SSH tunnels of an ssh transport.
	DefaultTunnels = int32(1)
	// DefaultKeepAliveInterval is ssh's ServerAliveInterval: a dead tunnel is noticed after three
	// missed replies.
	DefaultKeepAliveInterval = 10 * time.Second
	// DefaultSSHSSLMode is libpq's sslmode inside a tunnel: the tunnel alone encrypts.
	DefaultSSHSSLMode InnerSSLMode = "disable"
	// DefaultTLSSSLMode is a TLS transport's sslmode.
	DefaultTLSSSLMode = SSLModeVerifyFull
)
