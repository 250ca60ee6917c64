package v1alpha1

import (
	"cmp"
)

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
