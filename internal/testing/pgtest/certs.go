package pgtest

import (
	"os"
	"path/filepath"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/transport/pki"
)

// writeCertificates creates a CA, a server certificate for localhost and 127.0.0.1 signed by it,
// and an unrelated CA.
func writeCertificates(s *Server, dir string) error {
	ca, err := pki.NewCA("pgtest CA", 24*time.Hour)
	if err != nil {
		return err
	}
	other, err := pki.NewCA("pgtest unrelated CA", 24*time.Hour)
	if err != nil {
		return err
	}
	server, err := ca.Issue("localhost", []string{"localhost", "127.0.0.1"}, 24*time.Hour)
	if err != nil {
		return err
	}
	s.CAFile = filepath.Join(dir, "ca.crt")
	s.OtherCAFile = filepath.Join(dir, "other-ca.crt")
	files := []struct {
		name string
		pem  []byte
		mode os.FileMode
	}{
		{"ca.crt", ca.CertPEM, 0o644},
		{"other-ca.crt", other.CertPEM, 0o644},
		{"server.crt", server.CertPEM, 0o644},
		{"server.key", server.KeyPEM, 0o600},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.pem, f.mode); err != nil {
			return err
		}
	}
	return nil
}
