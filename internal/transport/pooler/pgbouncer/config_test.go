package pgbouncer

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func validConfig() Config {
	return Config{
		ListenAddr: "0.0.0.0", ListenPort: 6432, ServerHost: "pg-rw.db.svc", ServerPort: 5432, User: "app",
		ClientAuth: AuthSCRAM, PoolMode: "session", PoolSize: 10, MaxClientConn: 100, ServerTLSMode: "require",
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"valid", func(*Config) {}, ""},
		{"statement mode", func(c *Config) { c.PoolMode = "statement" }, "pool mode"},
		{"md5 clients", func(c *Config) { c.ClientAuth = "md5" }, "client authentication"},
		{"verify-full without CA", func(c *Config) { c.ServerTLSMode = "verify-full" }, "needs the server's CA"},
		{"cert without key", func(c *Config) { c.ClientTLSCertFile = "/tls.crt" }, "both a certificate and a key"},
		{"newline in user", func(c *Config) { c.User = "app\nadmin_users = x" }, "not allowed"},
		{"no pool", func(c *Config) { c.PoolSize = 0 }, "positive"},
		{"port out of range", func(c *Config) { c.ServerPort = 70000 }, "ports"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.mutate(&c)
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestIni(t *testing.T) {
	c := validConfig()
	c.ClientTLSCertFile, c.ClientTLSKeyFile = "/certs/tls.crt", "/certs/tls.key"
	c.ServerTLSMode, c.ServerCAFile = "verify-full", "/ca/ca.crt"
	ini := c.Ini("/run/auth")
	for _, want := range []string{
		"* = host=pg-rw.db.svc port=5432\n", "auth_type = scram-sha-256\n", "auth_file = /run/auth\n",
		"pool_mode = session\n", "default_pool_size = 10\n", "max_client_conn = 100\n",
		"client_tls_sslmode = require\n", "client_tls_cert_file = /certs/tls.crt\n",
		"server_tls_sslmode = verify-full\n", "server_tls_ca_file = /ca/ca.crt\n", "admin_users = app\n",
		"unix_socket_dir = \n",
	} {
		if !strings.Contains(ini, want) {
			t.Errorf("pgbouncer.ini lacks %q:\n%s", want, ini)
		}
	}
	if plain := validConfig().Ini("/a"); !strings.Contains(plain, "client_tls_sslmode = disable\n") ||
		strings.Contains(plain, "server_tls_ca_file") {
		t.Errorf("plain configuration:\n%s", plain)
	}
}

func TestWriteKeepsThePasswordPrivate(t *testing.T) {
	dir := t.TempDir()
	ini, err := Write(dir, validConfig(), `pa"ss word`)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := os.ReadFile(filepath.Join(dir, AuthFile))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(auth), `"app" "pa""ss word"`+"\n"; got != want {
		t.Errorf("auth file = %q, want %q", got, want)
	}
	iniText, _ := os.ReadFile(ini)
	if strings.Contains(string(iniText), "pa\"ss") {
		t.Errorf("the password leaked into pgbouncer.ini")
	}
	for _, f := range []string{ini, filepath.Join(dir, AuthFile)} {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600", f, st.Mode().Perm(), err)
		}
	}
	if _, err := Write(dir, validConfig(), "two\nlines"); err == nil {
		t.Errorf("a password with a line break was accepted")
	}
}

func TestArgsRoundTrip(t *testing.T) {
	want := validConfig()
	want.ClientTLSCertFile, want.ClientTLSKeyFile = "/c/tls.crt", "/c/tls.key"
	want.ServerTLSMode, want.ServerCAFile = "verify-full", "/ca/ca.crt"
	fs := flag.NewFlagSet("pgbouncer", flag.ContinueOnError)
	f := BindFlags(fs)
	if err := fs.Parse(want.Args()); err != nil {
		t.Fatal(err)
	}
	got, err := f.Config(want.User)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
	}
}
