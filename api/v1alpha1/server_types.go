package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
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

// Engine is the database engine a server runs: which protocol the benchmark speaks to it, and
// which load generator loads it.
// +kubebuilder:validation:Enum=postgresql;mysql
type Engine string

const (
	// EnginePostgreSQL is PostgreSQL, loaded by pgbench.
	EnginePostgreSQL Engine = "postgresql"
	// EngineMySQL is a MySQL-protocol server (MySQL, MariaDB), loaded by sysbench.
	EngineMySQL Engine = "mysql"
)

// EffectiveEngine is the server's engine, postgresql when unset.
func (s ServerSpec) EffectiveEngine() Engine {
	if s.Engine == "" {
		return EnginePostgreSQL
	}
	return s.Engine
}

// EffectivePort is an external server's port, the engine's own when unset.
func (s ServerSpec) EffectivePort() int32 {
	switch {
	case s.External != nil && s.External.Port != 0:
		return s.External.Port
	case s.EffectiveEngine() == EngineMySQL:
		return DefaultMySQLPort
	}
	return DefaultPort
}

// ServerSpec selects the server. Exactly one source must be set.
// +kubebuilder:validation:XValidation:rule="[has(self.cnpg), has(self.external), has(self.managed)].filter(x, x).size() == 1",message="spec.server: exactly one of cnpg, external or managed must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.engine) || self.engine == 'postgresql' || has(self.external)",message="spec.server.engine mysql needs spec.server.external: cnpg and managed servers are CloudNativePG's, which runs PostgreSQL"
type ServerSpec struct {
	// Engine is the server's engine: postgresql (pgbench loads it) or mysql, a MySQL-protocol
	// server such as MariaDB or MySQL (sysbench loads it).
	// +kubebuilder:default=postgresql
	// +optional
	Engine Engine `json:"engine,omitempty"`

	// CNPG is an existing CloudNativePG Cluster in the benchmark's namespace. The operator connects
	// to its <clusterName>-rw Service with the <clusterName>-app credentials and trusts the
	// <clusterName>-ca certificate authority, following CloudNativePG's naming conventions.
	// +optional
	CNPG *CNPGServer `json:"cnpg,omitempty"`

	// External is any server reachable from the runner pods.
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

	// Port is the server's TCP port; unset, the engine's own (5432 for postgresql, 3306 for
	// mysql).
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
