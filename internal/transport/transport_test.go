package transport

import (
	"testing"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

func TestConnInfo(t *testing.T) {
	s := Server{Host: "db.example", Port: 6432, Database: "bench", CredentialsSecret: "creds",
		UsernameKey: "username", PasswordKey: "password", CASecret: "ca", CAKey: "ca.crt"}
	tests := []struct {
		transport benchv1.TransportSpec
		want      string
	}{
		{benchv1.TransportSpec{Name: "d", Type: "direct"}, "host=db.example port=6432 dbname=bench sslmode=disable"},
		{benchv1.TransportSpec{Name: "t", Type: "tls"},
			"host=db.example port=6432 dbname=bench sslmode=verify-full sslrootcert=/etc/tunnelbench/server-ca/ca.crt"},
		{benchv1.TransportSpec{Name: "r", Type: "tls", TLS: &benchv1.TLSTransport{SSLMode: "require"}},
			"host=db.example port=6432 dbname=bench sslmode=require"},
	}
	for _, tt := range tests {
		t.Run(tt.transport.Name, func(t *testing.T) {
			c, err := For(s, tt.transport, SSHGateway{})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.ConnInfo(); got != tt.want {
				t.Errorf("ConnInfo = %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := For(s, benchv1.TransportSpec{Name: "x", Type: "carrier-pigeon"}, SSHGateway{}); err == nil {
		t.Error("an unsupported type must be an error")
	}
	if got := ForInit(s).ConnInfo(); got != "host=db.example port=6432 dbname=bench sslmode=prefer" {
		t.Errorf("init ConnInfo = %q", got)
	}
}
