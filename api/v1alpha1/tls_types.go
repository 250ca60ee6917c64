package v1alpha1

import (
	"cmp"
)

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
