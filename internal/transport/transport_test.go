package transport

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh/sshtunnel"
)

func forSpec(t *testing.T, tb *benchv1.TunnelBenchmark, spec benchv1.TransportSpec) Transport {
	t.Helper()
	tr, err := For(Context{Benchmark: tb, Spec: spec, Server: server, Defaults: defaults})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestUnsupportedType(t *testing.T) {
	if _, err := For(Context{Benchmark: benchmark(nil), Spec: benchv1.TransportSpec{Name: "x", Type: "carrier-pigeon"}}); err == nil {
		t.Error("an unsupported type must be an error")
	}
}

func TestConnInfo(t *testing.T) {
	external := func(tb *benchv1.TunnelBenchmark) {
		tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "pg-rw", Database: "app"}}
	}
	tests := []struct {
		name   string
		mutate func(*benchv1.TunnelBenchmark)
		spec   benchv1.TransportSpec
		want   string
		pooler runspec.PoolerKind
	}{
		{"direct", nil, benchv1.TransportSpec{Type: "direct"}, "host=pg-rw port=5432 dbname=app sslmode=disable", ""},
		{"tls", nil, benchv1.TransportSpec{Type: "tls"},
			"host=pg-rw port=5432 dbname=app sslmode=verify-full sslrootcert=/etc/tunnelbench/server-ca/ca.crt", ""},
		{"tls require", nil, benchv1.TransportSpec{Type: "tls", TLS: &benchv1.TLSTransport{SSLMode: "require"}},
			"host=pg-rw port=5432 dbname=app sslmode=require", ""},
		{"ssh", nil, benchv1.TransportSpec{Type: "ssh"}, "host=127.0.0.1 port=15432 dbname=app sslmode=disable", ""},
		{"own pooler", external, benchv1.TransportSpec{Type: "pooler"},
			"host=" + benchmark(nil).PoolerName("p") + ".db.svc port=5432 dbname=app sslmode=disable", runspec.PoolerPgBouncer},
		{"own pooler with TLS", external, benchv1.TransportSpec{Type: "pooler", Pooler: &benchv1.PoolerTransport{ClientTLS: "require"}},
			"host=" + benchmark(nil).PoolerName("p") + ".db.svc port=5432 dbname=app sslmode=require", runspec.PoolerPgBouncer},
		{"CloudNativePG Pooler", nil, benchv1.TransportSpec{Type: "pooler"},
			"host=" + benchmark(nil).PoolerName("p") + ".db.svc port=5432 dbname=app sslmode=disable", runspec.PoolerOpaque},
		{"sidecar pooler", nil, benchv1.TransportSpec{Type: "pooler", Pooler: &benchv1.PoolerTransport{Placement: "sidecar"}},
			"host=127.0.0.1 port=6432 dbname=app sslmode=disable", runspec.PoolerPgBouncer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Name = "p"
			var run runspec.Run
			pod, err := forSpec(t, benchmark(tt.mutate), tt.spec).Pod(&run)
			if err != nil {
				t.Fatal(err)
			}
			if got := ConnInfo(pod.Env); got != tt.want {
				t.Errorf("ConnInfo = %q, want %q", got, tt.want)
			}
			if run.Pooler != tt.pooler {
				t.Errorf("the runner observes pooler %q, want %q", run.Pooler, tt.pooler)
			}
		})
	}
	if got := ConnInfo(ForInit(server).Env); got != "host=pg-rw port=5432 dbname=app sslmode=prefer" {
		t.Errorf("init ConnInfo = %q", got)
	}
}

// TestVerifiesServer: which transports need the server's CA (the Secret is then checked before
// anything runs).
func TestVerifiesServer(t *testing.T) {
	tests := []struct {
		spec benchv1.TransportSpec
		want bool
	}{
		{benchv1.TransportSpec{Type: "direct"}, false},
		{benchv1.TransportSpec{Type: "tls"}, true},
		{benchv1.TransportSpec{Type: "tls", TLS: &benchv1.TLSTransport{SSLMode: "require"}}, false},
		{benchv1.TransportSpec{Type: "tls", TLS: &benchv1.TLSTransport{SSLMode: "verify-ca"}}, true},
		{benchv1.TransportSpec{Type: "ssh"}, false},
		{benchv1.TransportSpec{Type: "ssh", SSH: &benchv1.SSHTransport{SSLMode: "require"}}, false},
		{benchv1.TransportSpec{Type: "ssh", SSH: &benchv1.SSHTransport{SSLMode: "verify-ca"}}, true},
		{benchv1.TransportSpec{Type: "pooler"}, false},
		{benchv1.TransportSpec{Type: "pooler", Pooler: &benchv1.PoolerTransport{ServerTLS: "verify-full"}}, true},
	}
	for _, tt := range tests {
		tt.spec.Name = "x"
		if got := forSpec(t, benchmark(nil), tt.spec).VerifiesServer(); got != tt.want {
			t.Errorf("%s %+v %+v %+v: VerifiesServer = %v, want %v", tt.spec.Type, tt.spec.TLS, tt.spec.SSH, tt.spec.Pooler, got, tt.want)
		}
	}
	tb := benchmark(func(tb *benchv1.TunnelBenchmark) {
		tb.Spec.Transports = []benchv1.TransportSpec{{Name: "d", Type: "direct"}, {Name: "t", Type: "tls"}}
	})
	if !VerifiesServer(tb, server) {
		t.Error("a benchmark with a verifying transport needs the CA")
	}
}

// TestPeers: what each transport makes next to the server, in order, with its labels: a peer that
// serves one transport carries its transport label (removed when its run ends), the gateway several
// transports share does not.
func TestPeers(t *testing.T) {
	external := func(tb *benchv1.TunnelBenchmark) {
		tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "pg-rw", Database: "app"}}
	}
	issuer := func(tb *benchv1.TunnelBenchmark) {
		tb.Spec.TLS = &benchv1.BenchmarkTLS{IssuerRef: benchv1.IssuerReference{Name: "ca", Kind: "ClusterIssuer"}}
	}
	tests := []struct {
		name      string
		mutate    func(*benchv1.TunnelBenchmark)
		spec      benchv1.TransportSpec
		kinds     []string
		transport string
		reason    string
	}{
		{"direct", nil, benchv1.TransportSpec{Type: "direct"}, nil, "", conditions.ReasonJobFailed},
		{"tls", nil, benchv1.TransportSpec{Type: "tls"}, nil, "", conditions.ReasonCertificateNotReady},
		{"tls with an issued client certificate", issuer, benchv1.TransportSpec{Type: "tls",
			TLS: &benchv1.TLSTransport{ClientCertificate: &benchv1.ClientCertificate{CommonName: "app"}}},
			[]string{"Certificate"}, "x", conditions.ReasonCertificateNotReady},
		{"ssh", nil, benchv1.TransportSpec{Type: "ssh"}, []string{"Secret", "Service", "Deployment"}, "", conditions.ReasonTunnelDown},
		{"own pooler", external, benchv1.TransportSpec{Type: "pooler"}, []string{"Service", "Deployment"}, "x",
			conditions.ReasonPoolerUnavailable},
		{"own pooler with generated TLS", external, benchv1.TransportSpec{Type: "pooler",
			Pooler: &benchv1.PoolerTransport{ClientTLS: "require"}}, []string{"Secret", "Service", "Deployment"}, "x",
			conditions.ReasonPoolerUnavailable},
		{"own pooler with issued TLS", func(tb *benchv1.TunnelBenchmark) { external(tb); issuer(tb) },
			benchv1.TransportSpec{Type: "pooler", Pooler: &benchv1.PoolerTransport{ClientTLS: "require"}},
			[]string{"Certificate", "Service", "Deployment"}, "x", conditions.ReasonPoolerUnavailable},
		{"CloudNativePG Pooler", nil, benchv1.TransportSpec{Type: "pooler"}, []string{"Service", "Pooler"}, "x",
			conditions.ReasonPoolerUnavailable},
		{"sidecar pooler", nil, benchv1.TransportSpec{Type: "pooler", Pooler: &benchv1.PoolerTransport{Placement: "sidecar"}},
			nil, "", conditions.ReasonPoolerUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Name = "x"
			tb := benchmark(tt.mutate)
			tr := forSpec(t, tb, tt.spec)
			peers, err := tr.Peers()
			if err != nil {
				t.Fatal(err)
			}
			if len(peers) != len(tt.kinds) {
				t.Fatalf("%d peers, want %v", len(peers), tt.kinds)
			}
			for i, p := range peers {
				kind := ""
				switch o := p.Object.(type) {
				case *corev1.Secret:
					kind = "Secret"
				case *corev1.Service:
					kind = "Service"
				case *appsv1.Deployment:
					kind = "Deployment"
				case *unstructured.Unstructured:
					kind = o.GetKind()
				}
				if kind != tt.kinds[i] {
					t.Errorf("peer %d is a %s, want %s", i, kind, tt.kinds[i])
				}
				o := p.Object
				if o.GetNamespace() != "db" || o.GetLabels()[benchv1.LabelBenchmark] != "bench" ||
					o.GetLabels()[benchv1.LabelTransport] != tt.transport {
					t.Errorf("peer %s: namespace %q labels %v, want transport label %q", o.GetName(), o.GetNamespace(), o.GetLabels(), tt.transport)
				}
				if refs := o.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != "uid-1" || refs[0].Controller == nil || !*refs[0].Controller {
					t.Errorf("peer %s is not controlled by the benchmark: %+v", o.GetName(), refs)
				}
			}
			if got := tr.FailureReason(); got != tt.reason {
				t.Errorf("failure reason %s, want %s", got, tt.reason)
			}
		})
	}
}

// TestRecord: each transport's part of a result, from the runner's report.
func TestRecord(t *testing.T) {
	rep := &report.Report{
		TLS:     &report.TLS{Version: "TLSv1.3", Cipher: "TLS_AES_256_GCM_SHA384"},
		SSH:     &sshtunnel.Negotiated{Cipher: "aes128-ctr", MAC: "hmac-sha2-256-etm@openssh.com", Compression: "none"},
		Tunnels: []report.Tunnel{{Index: 0, TPS: 60, Transactions: 600}, {Index: 1, TPS: 40, Transactions: 400}},
		Pooler: &report.Pooler{ClientTLS: &report.TLS{Version: "TLSv1.3", Cipher: "TLS_AES_128_GCM_SHA256"},
			Counted: true, Transactions: 1000, ServerConnections: 4},
	}
	tests := []struct {
		name   string
		mutate func(*benchv1.TunnelBenchmark)
		spec   benchv1.TransportSpec
		check  func(t *testing.T, r benchv1.TransportResult)
	}{
		{"direct records nothing of its own", nil, benchv1.TransportSpec{Type: "direct"}, func(t *testing.T, r benchv1.TransportResult) {
			if r.SSH != nil || r.Tunnels != nil || r.Pooler != nil {
				t.Errorf("%+v", r)
			}
		}},
		{"ssh: negotiated algorithms and tunnels", nil, benchv1.TransportSpec{Type: "ssh"}, func(t *testing.T, r benchv1.TransportResult) {
			if r.SSH == nil || r.SSH.Cipher != "aes128-ctr" || len(r.Tunnels) != 2 || r.Tunnels[1].TPS != 40 || r.Pooler != nil {
				t.Errorf("%+v", r)
			}
		}},
		{"own pooler: both hops and the evidence", func(tb *benchv1.TunnelBenchmark) {
			tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "pg-rw", Database: "app"}}
		}, benchv1.TransportSpec{Type: "pooler"}, func(t *testing.T, r benchv1.TransportResult) {
			p := r.Pooler
			if p == nil || p.Implementation != "PgBouncer" || p.ClientHop.Auth != "scram-sha-256" ||
				p.ClientHop.TLS != "TLSv1.3/TLS_AES_128_GCM_SHA256" || p.ServerHop.TLS != "TLSv1.3/TLS_AES_256_GCM_SHA384" ||
				p.Transactions == nil || *p.Transactions != 1000 || *p.ServerConnections != 4 || p.PoolMode != "session" {
				t.Errorf("%+v", p)
			}
		}},
		{"CloudNativePG Pooler", nil, benchv1.TransportSpec{Type: "pooler"}, func(t *testing.T, r benchv1.TransportResult) {
			if p := r.Pooler; p == nil || p.Implementation != "CloudNativePG Pooler" || p.ClientHop.Auth != "scram-sha-256 (auth_query)" {
				t.Errorf("%+v", p)
			}
		}},
		{"sidecar pooler", nil, benchv1.TransportSpec{Type: "pooler", Pooler: &benchv1.PoolerTransport{Placement: "sidecar"}},
			func(t *testing.T, r benchv1.TransportResult) {
				if p := r.Pooler; p == nil || p.ClientHop.Auth != "trust" || p.Placement != "sidecar" {
					t.Errorf("%+v", p)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Name = "x"
			var r benchv1.TransportResult
			forSpec(t, benchmark(tt.mutate), tt.spec).Record(rep, &r)
			tt.check(t, r)
		})
	}
}

func TestUserSecrets(t *testing.T) {
	spec := benchv1.TransportSpec{Name: "m", Type: "tls", TLS: &benchv1.TLSTransport{
		ClientCertSecret: &benchv1.LocalObjectReference{Name: "client-tls"}}}
	got := forSpec(t, benchmark(nil), spec).UserSecrets()
	if len(got) != 1 || got[0].Name != "client-tls" || len(got[0].Keys) != 2 {
		t.Errorf("user secrets %+v", got)
	}
	if got := forSpec(t, benchmark(nil), benchv1.TransportSpec{Name: "d", Type: "direct"}).UserSecrets(); got != nil {
		t.Errorf("direct needs no Secret of its own: %+v", got)
	}
}

func TestBlame(t *testing.T) {
	tests := []struct {
		typ, part string
		want      string
	}{
		{"ssh", "tunnel-1", conditions.ReasonTunnelDown},
		{"ssh", TestSSHGateway, conditions.ReasonTunnelDown},
		{"ssh", TestPoolerContainer, ""},
		{"pooler", TestPoolerContainer, conditions.ReasonPoolerUnavailable},
		{"pooler", TestPoolerComponent, conditions.ReasonPoolerUnavailable},
		{"pooler", "tunnel-0", ""},
		{"direct", LinkContainer, conditions.ReasonNetworkEmulationFailed},
		{"tls", "tunnel-0", ""},
		{"vpn", TestVPNClient, conditions.ReasonTunnelDown},
		{"vpn", TestVPNGateway, conditions.ReasonTunnelDown},
		{"vpn", TestSSHGateway, ""},
	}
	for _, tt := range tests {
		t.Run(tt.typ+"/"+tt.part, func(t *testing.T) {
			tr := forSpec(t, benchmark(nil), benchv1.TransportSpec{Name: "x", Type: benchv1.TransportType(tt.typ)})
			if got := BrokenReason(tr, tt.part); got != tt.want {
				t.Errorf("BrokenReason(%s, %s) = %q, want %q", tt.typ, tt.part, got, tt.want)
			}
		})
	}
	if got := BrokenReason(nil, LinkContainer); got != conditions.ReasonNetworkEmulationFailed {
		t.Errorf("the initialization's link: %q", got)
	}
	if got := BrokenReason(nil, "tunnel-0"); got != "" {
		t.Errorf("the initialization has no tunnel: %q", got)
	}
}

func TestDescribe(t *testing.T) {
	tls := &benchv1.NegotiatedTLS{Version: "TLSv1.3", Cipher: "TLS_AES_256_GCM_SHA384"}
	tests := []struct {
		name string
		spec benchv1.TransportSpec
		res  benchv1.TransportResult
		want string
	}{
		{"direct names the address", benchv1.TransportSpec{Type: "direct"}, benchv1.TransportResult{}, "to pg-rw:5432"},
		{"tls", benchv1.TransportSpec{Type: "tls"}, benchv1.TransportResult{TLS: tls}, "TLSv1.3 TLS_AES_256_GCM_SHA384"},
		{"ssh with TLS inside and two tunnels", benchv1.TransportSpec{Type: "ssh"}, benchv1.TransportResult{TLS: tls,
			SSH: &benchv1.NegotiatedSSH{Cipher: "aes128-ctr", Compression: "none"}, Tunnels: make([]benchv1.TunnelResult, 2)},
			"TLSv1.3 TLS_AES_256_GCM_SHA384; ssh aes128-ctr, compression none; 2 tunnels"},
		{"pooler", benchv1.TransportSpec{Type: "pooler"}, benchv1.TransportResult{Pooler: &benchv1.PoolerResult{
			Implementation: "PgBouncer", Placement: "sidecar", PoolMode: "session",
			ClientHop: benchv1.Hop{Auth: "trust", TLS: "none"}, ServerHop: benchv1.Hop{Auth: "scram-sha-256", TLS: "TLSv1.3"}}},
			"PgBouncer sidecar session: client trust none, server scram-sha-256 TLSv1.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Name = "x"
			if got := forSpec(t, benchmark(nil), tt.spec).Describe(&tt.res); got != tt.want {
				t.Errorf("Describe = %q, want %q", got, tt.want)
			}
		})
	}
}
