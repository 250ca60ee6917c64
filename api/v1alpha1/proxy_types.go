package v1alpha1

import (
	"cmp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
