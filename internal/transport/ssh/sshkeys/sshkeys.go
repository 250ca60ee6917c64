// Package sshkeys makes the key material of an SSH tunnel: an ed25519 host key for the gateway, an
// ed25519 client key for the tunnels, the authorized_keys line that admits only that client, and
// the known_hosts lines that pin the gateway's host key.
package sshkeys

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Secret keys of the Secret that holds a tunnel's key material. Each pod mounts only its items.
const (
	HostKey        = "ssh_host_ed25519_key"
	AuthorizedKeys = "authorized_keys"
	ClientKey      = "id_ed25519"
	KnownHosts     = "known_hosts"
)

// Material is the key material of one gateway and its clients.
type Material struct {
	// HostKeyPEM and ClientKeyPEM are OpenSSH private keys.
	HostKeyPEM   []byte
	ClientKeyPEM []byte
	// AuthorizedKeys admits only the client key, with forwarding the only thing it may do.
	AuthorizedKeys []byte
	// KnownHosts pins the host key for the given host names.
	KnownHosts []byte
	// HostFingerprint is the host key's SHA256 fingerprint, for logs and status.
	HostFingerprint string
}

// Generate makes fresh keys. hosts are the names and ports the clients dial, as "name:port".
func Generate(hosts []string) (*Material, error) {
	hostPub, hostPEM, err := newKey("tunnelbench gateway")
	if err != nil {
		return nil, err
	}
	clientPub, clientPEM, err := newKey("tunnelbench client")
	if err != nil {
		return nil, err
	}
	patterns := make([]string, 0, len(hosts))
	for _, h := range hosts {
		patterns = append(patterns, HostPattern(h))
	}
	authorized := "restrict,port-forwarding " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(clientPub))) + "\n"
	known := strings.Join(patterns, ",") + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(hostPub))) + "\n"
	return &Material{
		HostKeyPEM: hostPEM, ClientKeyPEM: clientPEM,
		AuthorizedKeys: []byte(authorized), KnownHosts: []byte(known),
		HostFingerprint: ssh.FingerprintSHA256(hostPub),
	}, nil
}

// HostPattern is how known_hosts names the host "name:port": the bare name on ssh's port 22,
// "[name]:port" on any other, as ssh itself looks it up (and as HostKeyAlias must spell it).
func HostPattern(hostPort string) string {
	name, port, ok := strings.Cut(hostPort, ":")
	if !ok || port == "22" {
		return name
	}
	return fmt.Sprintf("[%s]:%s", name, port)
}

// SecretData renders the material as a Secret's data.
func (m *Material) SecretData() map[string][]byte {
	return map[string][]byte{
		HostKey: m.HostKeyPEM, AuthorizedKeys: m.AuthorizedKeys,
		ClientKey: m.ClientKeyPEM, KnownHosts: m.KnownHosts,
	}
}

func newKey(comment string) (ssh.PublicKey, []byte, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot generate an ed25519 key: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot encode the private key: %w", err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, nil, err
	}
	return sshPub, pem.EncodeToMemory(block), nil
}
