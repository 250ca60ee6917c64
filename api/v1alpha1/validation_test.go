package v1alpha1_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// TestCRDRejectsInvalidManifests applies invalid benchmarks to the real API server: the CRD's
// schema and CEL rules must reject each one with a message naming the field.
func TestCRDRejectsInvalidManifests(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	tx := int32(100)
	tests := []struct {
		name   string
		mutate func(tb *benchv1.TunnelBenchmark)
		want   []string
	}{
		{
			name: "two server sources",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server.External = &benchv1.ExternalServer{Host: "db", Database: "app",
					CredentialsSecret: benchv1.LocalObjectReference{Name: "creds"}}
			},
			want: []string{"spec.server", "exactly one of cnpg, external or managed"},
		},
		{
			name: "a MySQL engine on a CloudNativePG server",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server.Engine, tb.Spec.Load.Builtin = benchv1.EngineMySQL, "oltp_read_only"
			},
			want: []string{"spec.server.engine mysql needs spec.server.external"},
		},
		{
			name: "pgbench's test on a MySQL server",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server = mysqlServer()
			},
			want: []string{"spec.load.builtin", "sysbench's, for spec.server.engine mysql"},
		},
		{
			name:   "sysbench's test on a PostgreSQL server",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Builtin = "oltp_point_select" },
			want:   []string{"spec.load.builtin", "pgbench's, for spec.server.engine postgresql"},
		},
		{
			name: "a reconnect per transaction on MySQL",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server, tb.Spec.Load.Builtin, tb.Spec.Load.Reconnect = mysqlServer(), "oltp_point_select", true
			},
			want: []string{"spec.server.engine mysql", "reconnect"},
		},
		{
			name: "TLS from sysbench to the MySQL pooler, not built yet",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server, tb.Spec.Load.Builtin = mysqlServer(), "oltp_point_select"
				tb.Spec.Transports = append(tb.Spec.Transports, poolerTransport(&benchv1.PoolerTransport{PoolMode: "transaction",
					ClientTLS: "require"})...)
			},
			want: []string{"spec.transports[].pooler to spec.server.engine mysql is TunnelBench's mysqlpool", "clientTLS disable"},
		},
		{
			name: "the MySQL pooler in session mode",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server, tb.Spec.Load.Builtin = mysqlServer(), "oltp_point_select"
				tb.Spec.Transports = poolerTransport(&benchv1.PoolerTransport{Placement: "sidecar"})
			},
			want: []string{"spec.transports[].pooler to spec.server.engine mysql", "poolMode transaction"},
		},
		{
			name: "PgBouncer to MySQL",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server, tb.Spec.Load.Builtin = mysqlServer(), "oltp_point_select"
				tb.Spec.Transports = poolerTransport(&benchv1.PoolerTransport{Implementation: "pgbouncer", Placement: "sidecar",
					PoolMode: "transaction"})
			},
			want: []string{"spec.transports[].pooler to spec.server.engine mysql is TunnelBench's mysqlpool"},
		},
		{
			name: "the MySQL pooler to PostgreSQL",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = poolerTransport(&benchv1.PoolerTransport{Implementation: "mysqlpool", Placement: "sidecar",
					PoolMode: "transaction"})
			},
			want: []string{"spec.transports[].pooler.implementation mysqlpool is MySQL's pooler"},
		},
		{
			name: "TLS inside an ssh tunnel to MySQL",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server, tb.Spec.Load.Builtin = mysqlServer(), "oltp_point_select"
				tb.Spec.Transports = sshTransport(&benchv1.SSHTransport{SSLMode: "require"})
			},
			want: []string{"spec.transports to spec.server.engine mysql", "sslMode disable"},
		},
		{
			name: "TLS through a proxy to MySQL",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server, tb.Spec.Load.Builtin = mysqlServer(), "oltp_point_select"
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "lb", Type: benchv1.TransportProxy,
					Proxy: &benchv1.ProxyTransport{SSLMode: "require"}}}
			},
			want: []string{"spec.transports to spec.server.engine mysql", "sslMode disable"},
		},
		{
			name: "several runner pods on MySQL, not built yet",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server, tb.Spec.Load.Builtin = mysqlServer(), "oltp_point_select"
				tb.Spec.Runner = &benchv1.RunnerSpec{Pods: 2}
			},
			want: []string{"spec.server.engine mysql runs from one runner pod"},
		},
		{
			name: "MySQL's TLS without a client certificate",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server, tb.Spec.Load.Builtin = mysqlServer(), "oltp_point_select"
				tb.Spec.Transports = append(tb.Spec.Transports, benchv1.TransportSpec{Name: "tls", Type: benchv1.TransportTLS})
			},
			want: []string{"spec.transports", "needs tls.clientCertSecret or tls.clientCertificate"},
		},
		{
			// libpq expands a dbname holding "=" as a connection string: pgbench would connect to
			// 127.0.0.1:1 past the host checks, the transport and the TLS mode.
			name: "a database name that is a connection string",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server.CNPG.Database = "host=127.0.0.1 port=1 dbname=app sslmode=disable"
			},
			want: []string{"spec.server.cnpg.database", "not a connection string or URI"},
		},
		{
			name: "an external server's database that is a URI",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "db",
					Database: "postgresql://127.0.0.1:1/app", CredentialsSecret: benchv1.LocalObjectReference{Name: "creds"}}}
			},
			want: []string{"spec.server.external.database", "not a connection string or URI"},
		},
		{
			name: "a script that runs a shell command",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Builtin, tb.Spec.Load.Script = "", "\\set x 1\n\\SetShell out env\nselect 1;"
			},
			want: []string{"spec.load.script", `must not use pgbench's \shell or \setshell`},
		},
		{
			name: "a script that runs a shell",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Builtin, tb.Spec.Load.Script = "", "\\shell cat /proc/self/environ\nselect 1;"
			},
			want: []string{"spec.load.script", "next to the server's password"},
		},
		{
			// pgbench's lexer skips whitespace and continuations before a meta-command's word: the
			// issue's leak was `\ shell echo "pgbench: error: leak-$PGPASSWORD"; kill -9 $PPID`.
			name: "a shell spelt with a space after the backslash",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Builtin, tb.Spec.Load.Script = "", "select 1;\n\\ shell echo \"pgbench: error: leak-$PGPASSWORD\"; kill -9 $PPID\n"
			},
			want: []string{"spec.load.script", "in any spelling"},
		},
		{
			name: "a shell spelt across continuations, in mixed case",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Builtin, tb.Spec.Load.Script = "", "select 1 \\\t\\\r\n \\\n SeTsHeLl v env\n"
			},
			want: []string{"spec.load.script", "in any spelling"},
		},
		{
			name:   "more clients than a server could take",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Clients = 1001 },
			want:   []string{"spec.load.clients", "less than or equal to 1000"},
		},
		{
			name: "a storm of a million connections",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.ConnectionStorm = &benchv1.ConnectionStorm{Connections: 1000000}
			},
			want: []string{"spec.load.connectionStorm.connections", "less than or equal to 100000"},
		},
		{
			name:   "a scale of a terabyte and a half",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Scale = 100000 },
			want:   []string{"spec.load.scale", "less than or equal to 10000"},
		},
		{
			name: "a hundred million transactions per client",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				many := int32(100000000)
				tb.Spec.Load.Duration, tb.Spec.Load.Transactions = nil, &many
			},
			want: []string{"spec.load.transactions", "less than or equal to 10000000"},
		},
		{
			name: "a managed volume of two tebibytes",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				size := resource.MustParse("2Ti")
				tb.Spec.Server = benchv1.ServerSpec{Managed: &benchv1.ManagedServer{StorageSize: &size}}
			},
			want: []string{"spec.server.managed.storageSize", "between 64Mi and 1Ti"},
		},
		{
			name: "a timeout shorter than the runs",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: "direct"}, {Name: "tls", Type: "tls"}}
				tb.Spec.Load.Repetitions, tb.Spec.Load.Duration = 5, &metav1.Duration{Duration: 3 * time.Minute}
			},
			want: []string{"spec.timeout is shorter than the runs alone", "raise spec.timeout (default 30m)"},
		},
		{
			name: "a copy at a rate",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Builtin, tb.Spec.Load.Initialize, tb.Spec.Load.Rate = "", true, ptr.To[int32](100)
				tb.Spec.Load.Copy = &benchv1.CopyLoad{Size: resource.MustParse("1Mi")}
			},
			want: []string{"rate and latencyLimit apply to pgbench loads only"},
		},
		{
			name: "a latency limit below 100us",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.LatencyLimit = &metav1.Duration{Duration: 50 * time.Microsecond}
			},
			want: []string{"spec.load.latencyLimit must be between 100us and 1h"},
		},
		{
			name:   "a rate of 0",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Rate = ptr.To[int32](0) },
			want:   []string{"spec.load.rate", "greater than or equal to 1"},
		},
		{
			name:   "a negative seed",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Seed = ptr.To[int64](-1) },
			want:   []string{"spec.load.seed", "greater than or equal to 0"},
		},
		{
			name:   "a seed JSON cannot carry exactly",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Seed = ptr.To[int64](1 << 53) },
			want:   []string{"spec.load.seed", "less than or equal to 9007199254740991"},
		},
		{
			name: "a stall timeout shorter than two progress reports",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.ProgressInterval = &metav1.Duration{Duration: 10 * time.Second}
				tb.Spec.Load.StallTimeout = &metav1.Duration{Duration: 15 * time.Second}
			},
			want: []string{"spec.load", "stallTimeout must be at least twice spec.load.progressInterval"},
		},
		{
			name:   "a stall timeout of a second",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.StallTimeout = &metav1.Duration{Duration: time.Second} },
			want:   []string{"spec.load.stallTimeout", "between 5s and 1h"},
		},
		{
			name: "a host with a space",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "db 10.0.0.1", Database: "app",
					CredentialsSecret: benchv1.LocalObjectReference{Name: "creds"}}}
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}}
			},
			want: []string{"spec.server.external.host", "must be a DNS name"},
		},
		{
			name: "a bracketed IPv6 host",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "[fd00::5]", Database: "app",
					CredentialsSecret: benchv1.LocalObjectReference{Name: "creds"}}}
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}}
			},
			want: []string{"spec.server.external.host", "IPv6 one without brackets"},
		},
		{
			name: "cnpg and managed",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server.Managed = &benchv1.ManagedServer{}
			},
			want: []string{"spec.server", "exactly one of cnpg, external or managed"},
		},
		{
			name: "managed cluster of six instances",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server = benchv1.ServerSpec{Managed: &benchv1.ManagedServer{Instances: 6}}
			},
			want: []string{"spec.server.managed.instances"},
		},
		{
			name:   "an issuer with nothing to issue",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.TLS = issuer() },
			want:   []string{"spec", "spec.tls.issuerRef issues the server certificate of spec.server.managed"},
		},
		{
			name: "an issuer of an unknown kind",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server = benchv1.ServerSpec{Managed: &benchv1.ManagedServer{}}
				tb.Spec.TLS = &benchv1.BenchmarkTLS{IssuerRef: benchv1.IssuerReference{Name: "ca", Kind: "Vault"}}
			},
			want: []string{"spec.tls.issuerRef.kind", "Unsupported value"},
		},
		{
			name: "a client certificate without an issuer",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "t", Type: "tls",
					TLS: &benchv1.TLSTransport{ClientCertificate: &benchv1.ClientCertificate{CommonName: "app"}}}}
			},
			want: []string{"spec.transports", "tls.clientCertificate needs spec.tls.issuerRef"},
		},
		{
			name: "a client certificate twice",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.TLS = issuer()
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "t", Type: "tls", TLS: &benchv1.TLSTransport{
					ClientCertSecret:  &benchv1.LocalObjectReference{Name: "mine"},
					ClientCertificate: &benchv1.ClientCertificate{CommonName: "app"}}}}
			},
			want: []string{"spec.transports[0].tls", "mutually exclusive"},
		},
		{
			name:   "no server source",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Server.CNPG = nil },
			want:   []string{"spec.server", "exactly one of cnpg, external or managed"},
		},
		{
			name: "duplicate transport names",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "a", Type: "direct"}, {Name: "a", Type: "tls"}}
			},
			want: []string{"spec.transports[1]", "Duplicate value"},
		},
		{
			name:   "no transports",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Transports = []benchv1.TransportSpec{} },
			want:   []string{"spec.transports", "at least 1"},
		},
		{
			name: "transport name is not a DNS label",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "Direct_1", Type: "direct"}}
			},
			want: []string{"spec.transports[0].name"},
		},
		{
			name: "reserved transport name",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "init", Type: "direct"}}
			},
			want: []string{"spec.transports[0]", "reserved"},
		},
		{
			name: "unknown transport type",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "x", Type: "carrier-pigeon"}}
			},
			want: []string{"spec.transports[0].type", "Unsupported value"},
		},
		{
			name: "tls settings on a direct transport",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "d", Type: "direct",
					TLS: &benchv1.TLSTransport{SSLMode: "require"}}}
			},
			want: []string{"spec.transports[0]", "only allowed for a transport of type tls"},
		},
		{
			name: "sslmode that may fall back to plain TCP",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "t", Type: "tls",
					TLS: &benchv1.TLSTransport{SSLMode: "prefer"}}}
			},
			want: []string{"spec.transports[0].tls.sslMode", "Unsupported value"},
		},
		{
			name: "a cipher OpenSSH removed",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = sshTransport(&benchv1.SSHTransport{Cipher: "blowfish-cbc"})
			},
			want: []string{"spec.transports[0].ssh.cipher", "removed from OpenSSH 7", "use aes128-gcm@openssh.com"},
		},
		{
			name: "arcfour",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = sshTransport(&benchv1.SSHTransport{Cipher: "arcfour256"})
			},
			want: []string{"spec.transports[0].ssh.cipher", "removed from OpenSSH 7"},
		},
		{
			name: "an unknown cipher",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = sshTransport(&benchv1.SSHTransport{Cipher: "aes128-cbc"})
			},
			want: []string{"spec.transports[0].ssh.cipher", "must be one of"},
		},
		{
			name: "CompressionLevel",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				level := int32(9)
				tb.Spec.Transports = sshTransport(&benchv1.SSHTransport{Compression: true, CompressionLevel: &level})
			},
			want: []string{"spec.transports[0].ssh", "only ever applied to SSH protocol 1", "use compression: true"},
		},
		{
			name: "a MAC with an AEAD cipher",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = sshTransport(&benchv1.SSHTransport{Cipher: "aes128-gcm@openssh.com", MAC: "hmac-sha2-256"})
			},
			want: []string{"spec.transports[0].ssh", "applies only to the non-AEAD ciphers"},
		},
		{
			name: "too many tunnels",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = sshTransport(&benchv1.SSHTransport{Tunnels: 33})
			},
			want: []string{"spec.transports[0].ssh.tunnels"},
		},
		{
			name: "more tunnels than clients",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = sshTransport(&benchv1.SSHTransport{Tunnels: 8})
			},
			want: []string{"ssh.tunnels must not exceed spec.load.clients"},
		},
		{
			name: "verify-full inside a tunnel",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = sshTransport(&benchv1.SSHTransport{SSLMode: "verify-full"})
			},
			want: []string{"spec.transports[0].ssh.sslMode", "Unsupported value"},
		},
		{
			name: "a vpn of an unknown kind",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "wg", Type: "vpn", VPN: &benchv1.VPNTransport{Kind: "ipsec"}}}
			},
			want: []string{"spec.transports[0].vpn.kind", "Unsupported value"},
		},
		{
			name: "verify-full through a proxy",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "lb", Type: "proxy", Proxy: &benchv1.ProxyTransport{SSLMode: "verify-full"}}}
			},
			want: []string{"spec.transports[0].proxy.sslMode", "Unsupported value"},
		},
		{
			name: "proxy settings on a direct transport",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "d", Type: "direct", Proxy: &benchv1.ProxyTransport{}}}
			},
			want: []string{"spec.transports[0]", "proxy settings are only allowed for a transport of type proxy"},
		},
		{
			name: "direct settings on a tls transport",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "t", Type: "tls", Direct: &benchv1.DirectTransport{Via: "pod"}}}
			},
			want: []string{"spec.transports[0]", "direct settings are only allowed for a transport of type direct"},
		},
		{
			name: "direct via a node",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "d", Type: "direct", Direct: &benchv1.DirectTransport{Via: "node"}}}
			},
			want: []string{"spec.transports[0].direct.via", "Unsupported value"},
		},
		{
			name: "a shared pooler over a tunnel",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "wg", Type: "vpn"},
					{Name: "p", Type: "pooler", Pooler: &benchv1.PoolerTransport{Over: "wg"}}}
			},
			want: []string{"pooler.over applies to placement sidecar"},
		},
		{
			name: "verify-full through a tunnel under a sidecar pooler",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "s", Type: "ssh"},
					{Name: "p", Type: "pooler", Pooler: &benchv1.PoolerTransport{Placement: "sidecar", Over: "s", ServerTLS: "verify-full"}}}
			},
			want: []string{"pooler.serverTLS verify-full cannot check the server's name through pooler.over"},
		},
		{
			name: "vpn settings on an ssh transport",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "s", Type: "ssh", VPN: &benchv1.VPNTransport{}}}
			},
			want: []string{"spec.transports[0]", "vpn settings are only allowed for a transport of type vpn"},
		},
		{
			name: "ssh settings on a tls transport",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "t", Type: "tls", SSH: &benchv1.SSHTransport{}}}
			},
			want: []string{"spec.transports[0]", "ssh settings are only allowed for a transport of type ssh"},
		},
		{
			name:   "threads exceed clients",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Clients, tb.Spec.Load.Threads = 2, 4 },
			want:   []string{"spec.load.threads must not exceed spec.load.clients"},
		},
		{
			name: "a precision target with the default repetitions",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Precision = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionDecide}
			},
			want: []string{"spec.load.precision needs spec.load.repetitions of at least 4"},
		},
		{
			name: "a precision target over sequential runs",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Precision = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionDecide}
				tb.Spec.Load.Repetitions, tb.Spec.Load.Order = 6, benchv1.OrderSequential
			},
			want: []string{"spec.load.precision needs interleaved runs"},
		},
		{
			name: "a precision target with a storm",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Precision = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionDecide}
				tb.Spec.Load.Repetitions, tb.Spec.Load.ConnectionStorm = 6, &benchv1.ConnectionStorm{Connections: 10}
			},
			want: []string{"spec.load.precision does not combine with spec.load.connectionStorm"},
		},
		{
			name: "a precision target in a sweep",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Precision = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionDecide}
				tb.Spec.Load.Repetitions, tb.Spec.Sweep = 6, &benchv1.SweepSpec{Clients: []int32{1, 2}}
			},
			want: []string{"spec.load.precision does not combine with spec.sweep"},
		},
		{
			name: "a half-width goal without its width",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Precision = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionHalfWidth}
				tb.Spec.Load.Repetitions = 6
			},
			want: []string{"spec.load.precision.halfWidthPercent is required with goal halfWidth"},
		},
		{
			name: "a minimum effect on a half-width goal",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Precision = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionHalfWidth,
					HalfWidthPercent: ptr.To[int32](3), MinEffectPercent: ptr.To[int32](5)}
				tb.Spec.Load.Repetitions = 6
			},
			want: []string{"spec.load.precision.minEffectPercent applies to goal decide only"},
		},
		{
			name:   "duration and transactions",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Transactions = &tx },
			want:   []string{"spec.load", "duration and transactions are mutually exclusive"},
		},
		{
			name:   "neither builtin nor script",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Builtin = "" },
			want:   []string{"spec.load", "exactly one of builtin, script or copy"},
		},
		{
			name:   "builtin and script",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Script = "select 1;" },
			want:   []string{"spec.load", "exactly one of builtin, script or copy"},
		},
		{
			name:   "unknown builtin",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Builtin = "tpcc" },
			want:   []string{"spec.load.builtin", "Unsupported value"},
		},
		{
			name:   "unknown protocol",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Protocol = "binary" },
			want:   []string{"spec.load.protocol", "Unsupported value"},
		},
		{
			name:   "zero clients",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Clients = -1 },
			want:   []string{"spec.load.clients"},
		},
		{
			name: "sub-second duration",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Duration = &metav1.Duration{Duration: 500 * time.Millisecond}
			},
			want: []string{"spec.load.duration", "between 1s and 24h"},
		},
		{
			name: "prepared statements through a transaction pooler",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = poolerTransport(&benchv1.PoolerTransport{PoolMode: "transaction"})
			},
			want: []string{"spec.transports", "poolMode transaction cannot run spec.load.protocol prepared"},
		},
		{
			name: "pooler settings on a direct transport",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "d", Type: "direct", Pooler: &benchv1.PoolerTransport{}}}
			},
			want: []string{"spec.transports[0]", "only allowed for a transport of type pooler"},
		},
		{
			name: "pooler verify-full without a CA",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "db", Database: "app",
					CredentialsSecret: benchv1.LocalObjectReference{Name: "creds"}}}
				tb.Spec.Transports = poolerTransport(&benchv1.PoolerTransport{ServerTLS: "verify-full"})
			},
			want: []string{"spec.transports", "serverTLS verify-full needs spec.server.external.caSecret"},
		},
		{
			name: "server TLS of a CloudNativePG Pooler",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = poolerTransport(&benchv1.PoolerTransport{ServerTLS: "disable"})
			},
			want: []string{"spec.transports", "serverTLS cannot be set for a CloudNativePG Pooler"},
		},
		{
			name: "client TLS to a sidecar pooler",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = poolerTransport(&benchv1.PoolerTransport{Placement: "sidecar", ClientTLS: "require"})
			},
			want: []string{"spec.transports[0].pooler", "clientTLS require applies to placement service"},
		},
		{
			name: "statement pooling",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = poolerTransport(&benchv1.PoolerTransport{PoolMode: "statement"})
			},
			want: []string{"spec.transports[0].pooler.poolMode", "Unsupported value"},
		},
		{
			name:   "empty connection storm",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.ConnectionStorm = &benchv1.ConnectionStorm{} },
			want:   []string{"spec.load.connectionStorm.connections"},
		},
		{
			name: "copy and a builtin script",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Copy = &benchv1.CopyLoad{Size: resource.MustParse("64Mi")}
				tb.Spec.Load.Initialize = true
			},
			want: []string{"spec.load", "exactly one of builtin, script or copy"},
		},
		{
			name: "copy without initialization",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Builtin, tb.Spec.Load.Copy = "", &benchv1.CopyLoad{Size: resource.MustParse("64Mi")}
			},
			want: []string{"spec.load", "copy needs spec.load.initialize: true"},
		},
		{
			name: "a copy too large",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Builtin, tb.Spec.Load.Initialize = "", true
				tb.Spec.Load.Copy = &benchv1.CopyLoad{Size: resource.MustParse("2Gi")}
			},
			want: []string{"spec.load.copy.size", "between 1Mi and 1Gi"},
		},
		{
			name: "a copy of zeros",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Builtin, tb.Spec.Load.Initialize = "", true
				tb.Spec.Load.Copy = &benchv1.CopyLoad{Size: resource.MustParse("1Mi"), Data: "zeros"}
			},
			want: []string{"spec.load.copy.data", "Unsupported value"},
		},
		{
			name: "a copy with reconnect",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Builtin, tb.Spec.Load.Initialize, tb.Spec.Load.Reconnect = "", true, true
				tb.Spec.Load.Copy = &benchv1.CopyLoad{Size: resource.MustParse("1Mi")}
			},
			want: []string{"spec.load.copy: reconnect, connectionStorm, transactions, rate and latencyLimit apply to pgbench loads only"},
		},
		{
			name:   "bandwidth without a unit",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Network = &benchv1.NetworkSpec{Bandwidth: "50"} },
			want:   []string{"spec.network.bandwidth", "unit Kbit, Mbit or Gbit"},
		},
		{
			name:   "bandwidth in bytes",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Network = &benchv1.NetworkSpec{Bandwidth: "50MB"} },
			want:   []string{"spec.network.bandwidth", "unit Kbit, Mbit or Gbit"},
		},
		{
			name:   "fractional bandwidth",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Network = &benchv1.NetworkSpec{Bandwidth: "1.5Mbit"} },
			want:   []string{"spec.network.bandwidth", "1500Kbit"},
		},
		{
			name:   "bandwidth too low",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Network = &benchv1.NetworkSpec{Bandwidth: "64Kbit"} },
			want:   []string{"spec.network.bandwidth", "between 100Kbit and 10Gbit"},
		},
		{
			name: "bandwidth too high, per transport",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports[0].Network = &benchv1.NetworkSpec{Bandwidth: "40Gbit"}
			},
			want: []string{"spec.transports[0].network.bandwidth", "between 100Kbit and 10Gbit"},
		},
		{
			name: "sub-millisecond RTT",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Network = &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: 500 * time.Microsecond}}
			},
			want: []string{"spec.network.rtt", "between 1ms and 10s"},
		},
		{
			name: "jitter larger than the RTT",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Network = &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: 10 * time.Millisecond},
					Jitter: &metav1.Duration{Duration: 20 * time.Millisecond}}
			},
			want: []string{"spec.network", "jitter needs network.rtt and must not exceed it"},
		},
		{
			name: "jitter without an RTT",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Network = &benchv1.NetworkSpec{Jitter: &metav1.Duration{Duration: time.Millisecond}}
			},
			want: []string{"spec.network", "jitter needs network.rtt"},
		},
		{
			name: "unknown emulator",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Network = &benchv1.NetworkSpec{Bandwidth: "1Gbit", Emulator: "netem"}
			},
			want: []string{"spec.network.emulator", "Unsupported value"},
		},
		{
			name:   "a name too long for a label value",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Name = strings.Repeat("n", 64) },
			want:   []string{"metadata.name must be at most 63 characters"},
		},
		{
			name:   "timeout too short",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Timeout = &metav1.Duration{Duration: time.Second} },
			want:   []string{"spec.timeout", "at least 10s"},
		},
		{
			name:   "a sweep of nothing",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Sweep = &benchv1.SweepSpec{} },
			want:   []string{"spec.sweep", "exactly one of clients, tunnels or poolSize"},
		},
		{
			name:   "a sweep of one point",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{4}} },
			want:   []string{"spec.sweep.clients", "at least 2 items"},
		},
		{
			name:   "a sweep out of order",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 8, 4}} },
			want:   []string{"spec.sweep.clients must be in increasing order"},
		},
		{
			name:   "a sweep with a point twice",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 4, 4}} },
			want:   []string{"spec.sweep.clients", "Duplicate value"},
		},
		{
			name:   "a sweep past the clients bound",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 2000}} },
			want:   []string{"spec.sweep.clients[1]", "less than or equal to 1000"},
		},
		{
			name: "both parameters swept",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 2}, Tunnels: []int32{1, 2}}
			},
			want: []string{"spec.sweep", "exactly one of clients, tunnels or poolSize"},
		},
		{
			name: "more tunnels than a point's clients",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = sshTransport(&benchv1.SSHTransport{Tunnels: 2})
				tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 4}}
			},
			want: []string{"ssh.tunnels must not exceed spec.load.clients (every point of spec.sweep.clients)"},
		},
		{
			name: "a tunnels sweep past the clients",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Transports = sshTransport(nil)
				tb.Spec.Sweep = &benchv1.SweepSpec{Tunnels: []int32{1, 2, 4}}
				tb.Spec.Load.Clients = 2
			},
			want: []string{"spec.sweep.tunnels must not exceed spec.load.clients"},
		},
		{
			name: "several runner pods across a chaos-mesh link",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Runner = &benchv1.RunnerSpec{Pods: 2}
				tb.Spec.Network = &benchv1.NetworkSpec{Bandwidth: "1Gbit", Emulator: "chaos-mesh"}
			},
			want: []string{"several runner pods cannot cross a chaos-mesh link yet"},
		},
		{
			// The API refuses the Job's pod, not the benchmark: the operator would retry it until
			// its timeout.
			name: "a runner's CPU request above its limit",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Runner = &benchv1.RunnerSpec{Resources: &corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}}}
			},
			want: []string{"spec.runner.resources", "must not exceed its limit"},
		},
		{
			name: "a runner's memory request above its limit, in other units",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Runner = &benchv1.RunnerSpec{Resources: &corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1000M")}}}
			},
			want: []string{"spec.runner.resources", "must not exceed its limit"},
		},
		{
			name:   "seventeen runner pods",
			mutate: func(tb *benchv1.TunnelBenchmark) { tb.Spec.Runner = &benchv1.RunnerSpec{Pods: 17} },
			want:   []string{"spec.runner.pods", "less than or equal to 16"},
		},
		{
			name: "a swept copy",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Load.Builtin, tb.Spec.Load.Initialize = "", true
				tb.Spec.Load.Copy = &benchv1.CopyLoad{Size: resource.MustParse("64Mi")}
				tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 2}}
			},
			want: []string{"spec.sweep does not apply to a copy load"},
		},
		{
			name: "a sweep of more runs than status holds",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 2, 4, 8, 16, 32, 64, 128}}
				tb.Spec.Load.Repetitions, tb.Spec.Load.Duration = 20, &metav1.Duration{Duration: time.Second}
				tb.Spec.Load.Warmup = &metav1.Duration{}
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "a", Type: "direct"}, {Name: "b", Type: "direct"},
					{Name: "c", Type: "direct"}}
			},
			want: []string{"spec.sweep: points × transports × repetitions must be at most 320"},
		},
		{
			name: "a sweep of more curves than status holds",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 2, 4, 8, 16}}
				tb.Spec.Transports = []benchv1.TransportSpec{{Name: "a", Type: "direct"}, {Name: "b", Type: "direct"},
					{Name: "c", Type: "direct"}, {Name: "d", Type: "direct"}, {Name: "e", Type: "direct"}}
				tb.Spec.Load.Duration = &metav1.Duration{Duration: time.Second}
			},
			want: []string{"spec.sweep: points × transports must be at most 24"},
		},
		{
			name: "a sweep longer than the timeout",
			mutate: func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 2, 4, 8, 16, 32, 64}}
				tb.Spec.Load.Duration, tb.Spec.Load.Repetitions = &metav1.Duration{Duration: 60 * time.Second}, 5
			},
			want: []string{"spec.timeout is shorter than the runs alone (sweep points × transports"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newBenchmark(ns, "invalid")
			tt.mutate(tb)
			err := apiClient.Create(context.Background(), tb)
			if err == nil {
				_ = apiClient.Delete(context.Background(), tb)
				t.Fatalf("the API server accepted an invalid benchmark")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestCRDAcceptsValidManifests guards against rules that reject what they should not.
func TestCRDAcceptsValidManifests(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	tx := int32(1000)
	tests := []struct {
		name   string
		mutate func(tb *benchv1.TunnelBenchmark)
	}{
		{"a vpn with TLS inside across a chaos-mesh link, next to a direct one across the userspace link", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Network = &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: 10 * time.Millisecond}}
			tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: "direct"}, {Name: "wg", Type: "vpn",
				VPN:     &benchv1.VPNTransport{SSLMode: "require"},
				Network: &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: 10 * time.Millisecond}, Emulator: "chaos-mesh"}},
				{Name: "lb", Type: "proxy", Proxy: &benchv1.ProxyTransport{SSLMode: "require"}},
				{Name: "pod", Type: "direct", Direct: &benchv1.DirectTransport{Via: "pod"}},
				{Name: "pooled", Type: "pooler", Pooler: &benchv1.PoolerTransport{Placement: "sidecar", Over: "wg", ServerTLS: "require"},
					Network: &benchv1.NetworkSpec{}}}
		}},
		{"MySQL through every transport that carries it, the pooler among them, with a connection storm", func(tb *benchv1.TunnelBenchmark) {
			// Simple queries: prepared statements would pin each client to a server connection of
			// the pooler's two.
			tb.Spec.Server, tb.Spec.Load.Builtin, tb.Spec.Load.Protocol = mysqlServer(), "oltp_read_write", "simple"
			tb.Spec.Load.ConnectionStorm = &benchv1.ConnectionStorm{Connections: 600}
			tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: "direct"},
				{Name: "pod", Type: "direct", Direct: &benchv1.DirectTransport{Via: "pod"}},
				{Name: "tls", Type: "tls", TLS: &benchv1.TLSTransport{SSLMode: "verify-ca",
					ClientCertSecret: &benchv1.LocalObjectReference{Name: "client"}}},
				{Name: "ssh", Type: "ssh", SSH: &benchv1.SSHTransport{Tunnels: 2, Compression: true}},
				{Name: "wg", Type: "vpn"},
				{Name: "ovpn", Type: "vpn", VPN: &benchv1.VPNTransport{Kind: "openvpn"}},
				{Name: "lb", Type: "proxy"},
				{Name: "wan", Type: "direct", Network: &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: 10 * time.Millisecond}}},
				{Name: "pooled", Type: "pooler", Pooler: &benchv1.PoolerTransport{Placement: "sidecar", PoolMode: "transaction",
					PoolSize: 2, ServerTLS: "verify-full"}},
				{Name: "pooled-shared", Type: "pooler", Pooler: &benchv1.PoolerTransport{PoolMode: "transaction", ServerTLS: "verify-full"}}}
		}},
		{"a sweep of the MySQL pooler's size", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Server, tb.Spec.Load.Builtin, tb.Spec.Load.Clients = mysqlServer(), "oltp_point_select", 4
			tb.Spec.Load.Protocol = "simple"
			tb.Spec.Sweep = &benchv1.SweepSpec{PoolSize: []int32{1, 4}}
			tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: "direct"},
				{Name: "pooled", Type: "pooler", Pooler: &benchv1.PoolerTransport{Placement: "sidecar", PoolMode: "transaction"}}}
		}},
		{"cnpg with direct and tls", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: "direct"}, {Name: "tls", Type: "tls"}}
		}},
		{"external with require and an inline script", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "db.example", Database: "app",
				CredentialsSecret: benchv1.LocalObjectReference{Name: "creds"}}}
			tb.Spec.Transports = []benchv1.TransportSpec{{Name: "tls", Type: "tls", TLS: &benchv1.TLSTransport{SSLMode: "require"}}}
			tb.Spec.Load.Builtin, tb.Spec.Load.Script = "", "select 1;"
			tb.Spec.Load.Duration, tb.Spec.Load.Transactions = nil, &tx
		}},
		{"external on an IPv6 address through ssh, a script with \\set", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "fd00::5", Database: "app",
				CredentialsSecret: benchv1.LocalObjectReference{Name: "creds"}}}
			tb.Spec.Transports = sshTransport(&benchv1.SSHTransport{SSLMode: "require"})
			tb.Spec.Load.Builtin, tb.Spec.Load.Script = "", "\\set aid random(1, 100)\n-- no shell here\nselect :aid;"
		}},
		{"a managed server with room for its scale and clients", func(tb *benchv1.TunnelBenchmark) {
			size := resource.MustParse("2Gi")
			tb.Spec.Server = benchv1.ServerSpec{Managed: &benchv1.ManagedServer{StorageSize: &size,
				Parameters: map[string]string{"max_connections": "300"}}}
			tb.Spec.Load.Initialize, tb.Spec.Load.Scale, tb.Spec.Load.Clients = true, 100, 200
		}},
		{"a pooler-only managed benchmark with more clients than server connections", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Server = benchv1.ServerSpec{Managed: &benchv1.ManagedServer{}}
			tb.Spec.Transports = poolerTransport(&benchv1.PoolerTransport{PoolMode: "transaction"})
			tb.Spec.Load.Clients, tb.Spec.Load.Protocol = 500, "extended"
		}},
		{"the default timeout just covering 15 transports × 3 × (5s + 35s)", func(tb *benchv1.TunnelBenchmark) {
			for i := range 14 {
				tb.Spec.Transports = append(tb.Spec.Transports, benchv1.TransportSpec{Name: fmt.Sprintf("d%d", i), Type: "direct"})
			}
			tb.Spec.Load.Repetitions, tb.Spec.Load.Duration = 3, &metav1.Duration{Duration: 35 * time.Second}
		}},
		{"the longest name a label value takes", func(tb *benchv1.TunnelBenchmark) { tb.Name = strings.Repeat("n", 63) }},
		{"a precision target of ±3 % within 20 rounds", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Load.Repetitions, tb.Spec.Load.Duration = 20, &metav1.Duration{Duration: 10 * time.Second}
			tb.Spec.Load.Precision = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionHalfWidth, HalfWidthPercent: ptr.To[int32](3)}
		}},
		{"a decision within 8 rounds, 5 % the smallest effect that matters", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Load.Repetitions = 8
			tb.Spec.Load.Precision = &benchv1.PrecisionTarget{Goal: benchv1.PrecisionDecide, MinEffectPercent: ptr.To[int32](5)}
		}},
		{"external on a fully qualified name", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "pg-0.db.example.com.", Database: "app",
				CredentialsSecret: benchv1.LocalObjectReference{Name: "creds"}}}
			tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: "direct"}}
		}},
		{"ssh: four compressed aes256-ctr tunnels with a MAC", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Transports = sshTransport(&benchv1.SSHTransport{Compression: true, Cipher: "aes256-ctr",
				MAC: "hmac-sha2-256-etm@openssh.com", Tunnels: 4, SSLMode: "require"})
		}},
		{"ssh with defaults", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: "direct"}, {Name: "ssh", Type: "ssh"}}
		}},
		{"pooler with defaults next to a CloudNativePG server", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: "direct"}, {Name: "pooler", Type: "pooler"}}
		}},
		{"sidecar pooler verifying a CloudNativePG server", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Transports = poolerTransport(&benchv1.PoolerTransport{Placement: "sidecar", ServerTLS: "verify-full"})
		}},
		{"transaction pooler with TLS, extended protocol, reconnect and a storm", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "db", Database: "app",
				CredentialsSecret: benchv1.LocalObjectReference{Name: "creds"}}}
			tb.Spec.Transports = poolerTransport(&benchv1.PoolerTransport{PoolMode: "transaction", PoolSize: 1,
				MaxClientConnections: 4, ClientTLS: "require", ServerTLS: "require"})
			tb.Spec.Load.Protocol, tb.Spec.Load.Reconnect = "extended", true
			tb.Spec.Load.ConnectionStorm = &benchv1.ConnectionStorm{Connections: 1000}
		}},
		{"managed cluster with a pooler", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Server = benchv1.ServerSpec{Managed: &benchv1.ManagedServer{Instances: 1, StorageClass: "local-path",
				Parameters: map[string]string{"shared_buffers": "256MB"}}}
			tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: "direct"}, {Name: "pooler", Type: "pooler"}}
		}},
		{"a copy of random data", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Load.Builtin, tb.Spec.Load.Initialize = "", true
			tb.Spec.Load.Copy = &benchv1.CopyLoad{Size: resource.MustParse("64Mi"), Data: "random"}
		}},
		{"a WAN for every transport but a LAN baseline", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Network = &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: 10 * time.Millisecond},
				Jitter: &metav1.Duration{Duration: 2 * time.Millisecond}, Bandwidth: "50Mbit"}
			tb.Spec.Transports = []benchv1.TransportSpec{{Name: "lan", Type: "direct", Network: &benchv1.NetworkSpec{}},
				{Name: "wan", Type: "direct"}, {Name: "ssh", Type: "ssh", Network: &benchv1.NetworkSpec{Bandwidth: "10Gbit"}},
				{Name: "slow", Type: "tls", Network: &benchv1.NetworkSpec{Bandwidth: "100Kbit", Emulator: "chaos-mesh"}}}
		}},
		{"a verify-full sidecar pooler across chaos-mesh's link", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Transports = poolerTransport(&benchv1.PoolerTransport{Placement: "sidecar", ServerTLS: "verify-full"})
			tb.Spec.Network = &benchv1.NetworkSpec{Bandwidth: "1Gbit", Emulator: "chaos-mesh"}
		}},
		{"a clients sweep with more threads than its first point", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 2, 4, 8}}
			tb.Spec.Load.Clients, tb.Spec.Load.Threads = 4, 4
			tb.Spec.Load.Duration = &metav1.Duration{Duration: 10 * time.Second}
		}},
		{"a tunnels sweep of an ssh transport beside a direct reference", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Transports = []benchv1.TransportSpec{{Name: "direct", Type: "direct"}, {Name: "ssh", Type: "ssh"}}
			tb.Spec.Sweep = &benchv1.SweepSpec{Tunnels: []int32{1, 2, 4}}
			tb.Spec.Load.Clients, tb.Spec.Load.Threads = 8, 4
			tb.Spec.Load.Duration = &metav1.Duration{Duration: 10 * time.Second}
		}},
		{"a pool size sweep of a sidecar pooler in transaction mode", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Transports = append([]benchv1.TransportSpec{{Name: "direct", Type: "direct"}},
				poolerTransport(&benchv1.PoolerTransport{Placement: "sidecar", PoolMode: "transaction"})...)
			tb.Spec.Load.Protocol = "extended"
			tb.Spec.Sweep = &benchv1.SweepSpec{PoolSize: []int32{1, 2, 4}}
		}},
		{"a runner's request at its CPU limit, a limit without a request and a memory request alone", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Runner = &benchv1.RunnerSpec{Resources: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.05"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"),
					corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}}}
		}},
		{"four runner pods of 2 clients each, over a clients sweep from 4", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Runner = &benchv1.RunnerSpec{Pods: 4}
			tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{4, 8}}
		}},
		{"the largest sweep: 16 points × 1 transport × 20 repetitions", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Sweep = &benchv1.SweepSpec{Clients: []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}
			tb.Spec.Load.Repetitions, tb.Spec.Load.Duration = 20, &metav1.Duration{Duration: time.Second}
			tb.Spec.Load.Warmup = &metav1.Duration{}
		}},
		{"external verify-full with a CA", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "db", Database: "app",
				CredentialsSecret: benchv1.LocalObjectReference{Name: "creds"},
				CASecret:          &benchv1.LocalObjectReference{Name: "ca"}}}
			tb.Spec.Transports = []benchv1.TransportSpec{{Name: "tls", Type: "tls"}}
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newBenchmark(ns, fmt.Sprintf("valid-%d", i))
			tt.mutate(tb)
			if err := apiClient.Create(context.Background(), tb); err != nil {
				t.Fatalf("the API server rejected a valid benchmark: %v", err)
			}
			// What the CRD admits, the transports' rules (checked in Go at admission and before
			// any run) admit too.
			if errs := transport.Validate(&tb.Spec); len(errs) > 0 {
				t.Errorf("transport.Validate refuses a valid benchmark: %v", errs.ToAggregate())
			}
			got := getBenchmark(t, ns, tb.Name)
			if got.Spec.Timeout == nil || got.Spec.Timeout.Duration != 30*time.Minute {
				t.Errorf("spec.timeout default = %v, want 30m", got.Spec.Timeout)
			}
			if got.Spec.Load.ProgressInterval == nil || got.Spec.Load.ProgressInterval.Duration != 5*time.Second {
				t.Errorf("spec.load.progressInterval default = %v, want 5s", got.Spec.Load.ProgressInterval)
			}
		})
	}
}

// TestSpecIsImmutable: a started benchmark's results must not be reported under another spec.
// Each edit is tried on a fresh copy; re-sending the stored spec (Go clients write "30m" back as
// "30m0s") and editing metadata must stay possible.
func TestSpecIsImmutable(t *testing.T) {
	needsEnvtest(t)
	ns := newNamespace(t)
	if err := apiClient.Create(context.Background(), newBenchmark(ns, "frozen")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		mutate    func(tb *benchv1.TunnelBenchmark)
		wantError bool
	}{
		{"no change", func(tb *benchv1.TunnelBenchmark) {}, false},
		{"labels", func(tb *benchv1.TunnelBenchmark) { tb.Labels = map[string]string{"team": "db"} }, false},
		{"clients", func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Clients = 8 }, true},
		{"reconnect", func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Reconnect = true }, true},
		{"seed", func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Seed = ptr.To[int64](7) }, true},
		{"rate", func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Rate = ptr.To[int32](100) }, true},
		{"issuer", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Transports = poolerTransport(&benchv1.PoolerTransport{ClientTLS: "require"})
			tb.Spec.TLS = issuer()
		}, true},
		{"connection storm", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Load.ConnectionStorm = &benchv1.ConnectionStorm{Connections: 10}
		}, true},
		{"load duration", func(tb *benchv1.TunnelBenchmark) { tb.Spec.Load.Duration.Duration = time.Minute }, true},
		{"timeout", func(tb *benchv1.TunnelBenchmark) { tb.Spec.Timeout.Duration = time.Hour }, true},
		{"transports", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Transports = append(tb.Spec.Transports, benchv1.TransportSpec{Name: "tls", Type: "tls"})
		}, true},
		{"runner", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Runner = &benchv1.RunnerSpec{NodeSelector: map[string]string{"zone": "b"}}
		}, true},
		{"network", func(tb *benchv1.TunnelBenchmark) { tb.Spec.Network = &benchv1.NetworkSpec{Bandwidth: "50Mbit"} }, true},
		{"a transport's network", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Transports[0].Network = &benchv1.NetworkSpec{RTT: &metav1.Duration{Duration: 5 * time.Millisecond}}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := getBenchmark(t, ns, "frozen")
			tt.mutate(tb)
			err := apiClient.Update(context.Background(), tb)
			switch {
			case tt.wantError && (err == nil || !strings.Contains(err.Error(), "spec is immutable")):
				t.Fatalf("update error = %v, want the immutability message", err)
			case !tt.wantError && err != nil:
				t.Fatalf("update rejected: %v", err)
			}
		})
	}
}

func sshTransport(ssh *benchv1.SSHTransport) []benchv1.TransportSpec {
	return []benchv1.TransportSpec{{Name: "ssh", Type: benchv1.TransportSSH, SSH: ssh}}
}

func poolerTransport(p *benchv1.PoolerTransport) []benchv1.TransportSpec {
	return []benchv1.TransportSpec{{Name: "pooler", Type: benchv1.TransportPooler, Pooler: p}}
}

// mysqlServer is an external MySQL-protocol server, with its CA.
func mysqlServer() benchv1.ServerSpec {
	return benchv1.ServerSpec{Engine: benchv1.EngineMySQL, External: &benchv1.ExternalServer{Host: "mariadb", Database: "app",
		CredentialsSecret: benchv1.LocalObjectReference{Name: "creds"}, CASecret: &benchv1.LocalObjectReference{Name: "ca"}}}
}
