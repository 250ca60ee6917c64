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
			c, err := For(s, tt.transport, Peers{})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.ConnInfo(); got != tt.want {
				t.Errorf("ConnInfo = %q, want %q", got, tt.want)
			}
		})
	}
	pooler := Peers{Pooler: PoolerEndpoint{Name: "b-p-pooler", Host: "b-p-pooler.ns.svc"}}
	poolerCases := []struct {
		name    string
		spec    *benchv1.PoolerTransport
		peers   Peers
		want    string
		kind    string
		sidecar bool
	}{
		{"service", nil, pooler, "host=b-p-pooler.ns.svc port=5432 dbname=bench sslmode=disable", "pgbouncer", false},
		{"service with TLS", &benchv1.PoolerTransport{ClientTLS: "require"}, pooler,
			"host=b-p-pooler.ns.svc port=5432 dbname=bench sslmode=require", "pgbouncer", false},
		{"cloudnative-pg", nil, Peers{Pooler: PoolerEndpoint{Name: "b-p-pooler", Host: "b-p-pooler.ns.svc", CNPG: true}},
			"host=b-p-pooler.ns.svc port=5432 dbname=bench sslmode=disable", "opaque", false},
		{"sidecar", &benchv1.PoolerTransport{Placement: "sidecar"}, pooler,
			"host=127.0.0.1 port=6432 dbname=bench sslmode=disable", "pgbouncer", true},
	}
	for _, tt := range poolerCases {
		t.Run("pooler "+tt.name, func(t *testing.T) {
			c, err := For(s, benchv1.TransportSpec{Name: "p", Type: "pooler", Pooler: tt.spec}, tt.peers)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.ConnInfo(); got != tt.want {
				t.Errorf("ConnInfo = %q, want %q", got, tt.want)
			}
			if c.PoolerKind != tt.kind || (c.Sidecar != nil) != tt.sidecar {
				t.Errorf("pooler kind %q sidecar %v", c.PoolerKind, c.Sidecar != nil)
			}
			if c.Sidecar != nil && (c.Sidecar.Config.ClientAuth != "trust" || c.Sidecar.Config.ListenAddr != "127.0.0.1" ||
				c.Sidecar.Config.ServerHost != "db.example" || c.Sidecar.Config.ServerPort != 6432) {
				t.Errorf("sidecar settings %+v", c.Sidecar.Config)
			}
		})
	}
	if _, err := For(s, benchv1.TransportSpec{Name: "x", Type: "carrier-pigeon"}, Peers{}); err == nil {
		t.Error("an unsupported type must be an error")
	}
	if got := ForInit(s).ConnInfo(); got != "host=db.example port=6432 dbname=bench sslmode=prefer" {
		t.Errorf("init ConnInfo = %q", got)
	}
}
