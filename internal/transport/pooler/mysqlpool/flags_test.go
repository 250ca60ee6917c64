package mysqlpool

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSettingsRoundTrip(t *testing.T) {
	in := Settings{Listen: "127.0.0.1:6432", Stats: "127.0.0.1:9127", Server: "db.ns.svc:3306", PoolSize: 4, MaxClients: 100,
		ServerTLS: ServerTLSVerifyFull, ServerCAFile: "/etc/ca/ca.crt"}
	fs := flag.NewFlagSet("mysqlpool", flag.ContinueOnError)
	out := BindFlags(fs)
	if err := fs.Parse(in.Args()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*out, in) {
		t.Errorf("read back %+v from %+v", *out, in)
	}
}

func TestSettingsConfig(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	valid := Settings{Listen: "127.0.0.1:6432", Server: "db:3306", PoolSize: 2, MaxClients: 10, ServerTLS: ServerTLSRequire}
	for _, tt := range []struct {
		name   string
		change func(*Settings)
		want   string // "" for no error
	}{
		{"valid", func(*Settings) {}, ""},
		{"plain", func(s *Settings) { s.ServerTLS = ServerTLSDisable }, ""},
		{"no listen address", func(s *Settings) { s.Listen = "" }, "--listen"},
		{"a server without port", func(s *Settings) { s.Server = "db" }, "--server"},
		{"no pool", func(s *Settings) { s.PoolSize = 0 }, "--pool-size 0"},
		{"no client admitted", func(s *Settings) { s.MaxClients = 0 }, "--max-clients 0"},
		{"an unknown TLS mode", func(s *Settings) { s.ServerTLS = "prefer" }, `--server-tls "prefer"`},
		{"verify-full without a CA", func(s *Settings) { s.ServerTLS = ServerTLSVerifyFull }, "needs --server-ca"},
		{"a CA file with no certificate", func(s *Settings) { s.ServerTLS, s.ServerCAFile = ServerTLSVerifyFull, ca }, "holds no certificate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := valid
			tt.change(&s)
			cfg, err := s.Config("app", "secret")
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v, want one with %q", err, tt.want)
			case tt.want == "" && (cfg.ServerTLS != nil) != (s.ServerTLS != ServerTLSDisable):
				t.Errorf("server TLS %v for mode %s", cfg.ServerTLS, s.ServerTLS)
			}
		})
	}
}
