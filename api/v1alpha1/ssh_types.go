package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
