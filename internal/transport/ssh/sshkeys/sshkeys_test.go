package sshkeys

import (
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func TestGenerate(t *testing.T) {
	m, err := Generate([]string{"bench-ssh.db.svc:2222", "bench-ssh:2222"})
	if err != nil {
		t.Fatal(err)
	}
	hostSigner, err := ssh.ParsePrivateKey(m.HostKeyPEM)
	if err != nil {
		t.Fatalf("host key: %v", err)
	}
	clientSigner, err := ssh.ParsePrivateKey(m.ClientKeyPEM)
	if err != nil {
		t.Fatalf("client key: %v", err)
	}
	if hostSigner.PublicKey().Type() != ssh.KeyAlgoED25519 || clientSigner.PublicKey().Type() != ssh.KeyAlgoED25519 {
		t.Error("keys must be ed25519")
	}

	// known_hosts pins exactly the host key, for both names, with their port.
	_, hosts, pinned, _, _, err := ssh.ParseKnownHosts(m.KnownHosts)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(hosts, ",") != "[bench-ssh.db.svc]:2222,[bench-ssh]:2222" {
		t.Errorf("known_hosts names %v", hosts)
	}
	if string(pinned.Marshal()) != string(hostSigner.PublicKey().Marshal()) {
		t.Error("known_hosts does not pin the host key")
	}
	if m.HostFingerprint != ssh.FingerprintSHA256(hostSigner.PublicKey()) {
		t.Errorf("fingerprint %s", m.HostFingerprint)
	}

	// authorized_keys admits only the client key, restricted to port forwarding.
	authorized, _, options, _, err := ssh.ParseAuthorizedKey(m.AuthorizedKeys)
	if err != nil {
		t.Fatal(err)
	}
	if string(authorized.Marshal()) != string(clientSigner.PublicKey().Marshal()) {
		t.Error("authorized_keys does not hold the client key")
	}
	if strings.Join(options, ",") != "restrict,port-forwarding" {
		t.Errorf("authorized_keys options %v", options)
	}

	other, _ := Generate([]string{"x:22"})
	if string(other.HostKeyPEM) == string(m.HostKeyPEM) {
		t.Error("two generations returned the same key")
	}
	if !strings.HasPrefix(string(other.KnownHosts), "x ssh-ed25519 ") {
		t.Errorf("port 22 needs no brackets: %s", other.KnownHosts)
	}
}
