package pooler

import (
	"crypto/x509"
	"encoding/pem"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/testing/transporttest"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

func poolerSpec(p *benchv1.PoolerTransport) benchv1.TransportSpec {
	return benchv1.TransportSpec{Name: "pool", Type: benchv1.TransportPooler, Pooler: p}
}

// assertCredentialsByReference checks that a PgBouncer container gets the user and password
// only from the credentials Secret, and that no argument carries them.
func assertCredentialsByReference(t *testing.T, c corev1.Container) {
	t.Helper()
	found := 0
	for _, e := range c.Env {
		if e.Name == "PGUSER" || e.Name == "PGPASSWORD" {
			found++
			if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "pg-app" {
				t.Errorf("%s is not a reference to the credentials Secret: %+v", e.Name, e)
			}
		}
	}
	if found != 2 {
		t.Errorf("PGUSER and PGPASSWORD not both set: %+v", c.Env)
	}
	if s := c.SecurityContext; s == nil || *s.AllowPrivilegeEscalation || !*s.ReadOnlyRootFilesystem {
		t.Errorf("container security %+v", s)
	}
}

func TestPoolerSidecar(t *testing.T) {
	tb := benchmark(func(tb *benchv1.TunnelBenchmark) {
		tb.Spec.Load.ConnectionStorm = &benchv1.ConnectionStorm{Connections: 500}
	})
	tr := poolerSpec(&benchv1.PoolerTransport{Placement: "sidecar", PoolMode: "transaction", PoolSize: 3,
		MaxClientConnections: 50, ServerTLS: "verify-full"})
	pod := build(t, tb, tr)
	if len(pod.InitContainers) != 1 || pod.InitContainers[0].Name != "pgbouncer" {
		t.Fatalf("init containers %+v", pod.InitContainers)
	}
	sc := pod.InitContainers[0]
	if sc.RestartPolicy == nil || *sc.RestartPolicy != corev1.ContainerRestartPolicyAlways || sc.StartupProbe == nil {
		t.Errorf("pgbouncer is not a native sidecar with a startup probe: %+v", sc)
	}
	for _, want := range []string{"pgbouncer", "--listen=127.0.0.1:6432", "--server=pg-rw:5432", "--client-auth=trust",
		"--pool-mode=transaction", "--pool-size=3", "--max-client-conn=50", "--server-tls=verify-full",
		"--server-ca=" + PoolerServerCADir + "/ca.crt"} {
		if !slices.Contains(sc.Args, want) {
			t.Errorf("sidecar args %v lack %q", sc.Args, want)
		}
	}
	assertCredentialsByReference(t, sc)
	runnerArgs := pod.Containers[0].Args
	if !slices.Contains(runnerArgs, "--pooler=pgbouncer") || !slices.Contains(runnerArgs, "--storm=500") {
		t.Errorf("runner args %v", runnerArgs)
	}
	e := env(pod)
	if e["PGHOST"].Value != "127.0.0.1" || e["PGPORT"].Value != "6432" || e["PGSSLMODE"].Value != "disable" {
		t.Errorf("runner connects to %s:%s sslmode %s", e["PGHOST"].Value, e["PGPORT"].Value, e["PGSSLMODE"].Value)
	}
	var ca *corev1.Volume
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == "pooler-server-ca" {
			ca = &pod.Volumes[i]
		}
		if pod.Volumes[i].Name == "tmp" && pod.Volumes[i].EmptyDir.Medium != corev1.StorageMediumMemory {
			t.Errorf("/tmp, which holds the auth file, is not memory-backed")
		}
	}
	if ca == nil || ca.Secret.SecretName != "pg-ca" {
		t.Errorf("server CA volume %+v", ca)
	}
}

func TestServicePooler(t *testing.T) {
	tb := benchmark(func(tb *benchv1.TunnelBenchmark) {
		tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "pg-rw", Database: "app"}}
	})
	tr := poolerSpec(&benchv1.PoolerTransport{ClientTLS: "require"})
	p := pooler{c: transport.Context{Benchmark: tb, Spec: tr, Server: server, Defaults: defaults}}
	if p.cnpg() || p.name() != tb.PoolerName("pool") || p.host() != tb.PoolerName("pool")+".db.svc" {
		t.Fatalf("pooler %s at %s, CloudNativePG %v", p.name(), p.host(), p.cnpg())
	}
	dep := p.deployment()
	c := dep.Spec.Template.Spec.Containers[0]
	for _, want := range []string{"--listen=0.0.0.0:6432", "--client-auth=scram-sha-256", "--pool-mode=session",
		"--pool-size=20", "--max-client-conn=1000", "--server-tls=require",
		"--client-tls-cert=" + PoolerTLSDir + "/tls.crt"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("pooler args %v lack %q", c.Args, want)
		}
	}
	assertCredentialsByReference(t, c)
	if c.ReadinessProbe == nil || dep.Spec.Template.Spec.SecurityContext == nil || !*dep.Spec.Template.Spec.SecurityContext.RunAsNonRoot {
		t.Errorf("pooler pod lacks a readiness probe or a non-root security context")
	}
	svc := p.service()
	if svc.Name != p.name() || svc.Spec.Ports[0].Port != 5432 || svc.Spec.Ports[0].TargetPort.IntVal != 6432 {
		t.Errorf("service %+v", svc.Spec)
	}
	peers, err := p.Peers()
	if err != nil || len(peers) != 3 {
		t.Fatalf("peers %v (%v): want the TLS Secret, the Service and the Deployment", peers, err)
	}
	sec := peers[0].Object.(*corev1.Secret)
	if err := peers[0].Generate(); err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(sec.Data["tls.crt"])
	if block == nil {
		t.Fatal("tls.crt is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if sec.Type != corev1.SecretTypeTLS || len(sec.Data["tls.key"]) == 0 || !slices.Contains(cert.DNSNames, p.host()) {
		t.Errorf("TLS secret %s / names %v", sec.Type, cert.DNSNames)
	}
}

func TestCNPGPooler(t *testing.T) {
	tb := benchmark(nil)
	tr := poolerSpec(&benchv1.PoolerTransport{PoolMode: "transaction", PoolSize: 5, MaxClientConnections: 200})
	p := pooler{c: transport.Context{Benchmark: tb, Spec: tr, Server: server}}
	if !p.cnpg() {
		t.Fatal("a CloudNativePG server's service pooler must be a CloudNativePG Pooler")
	}
	u := p.cnpgPooler()
	if u.GetKind() != "Pooler" || u.GetAPIVersion() != "postgresql.cnpg.io/v1" || u.GetName() != tb.PoolerName("pool") ||
		len(u.GetOwnerReferences()) != 1 {
		t.Errorf("meta %s %s %s %v", u.GetAPIVersion(), u.GetKind(), u.GetName(), u.GetOwnerReferences())
	}
	for path, want := range map[string]string{
		"spec.cluster.name": "pg", "spec.type": "rw", "spec.pgbouncer.poolMode": "transaction",
		"spec.pgbouncer.parameters.default_pool_size": "5", "spec.pgbouncer.parameters.max_client_conn": "200",
	} {
		got, _, _ := unstructured.NestedString(u.Object, strings.Split(path, ".")...)
		if got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	sidecar := pooler{c: transport.Context{Benchmark: tb, Spec: poolerSpec(&benchv1.PoolerTransport{Placement: "sidecar"}), Server: server}}
	if sidecar.cnpg() {
		t.Error("a sidecar pooler is the operator's own PgBouncer, even for a CloudNativePG server")
	}
	// CloudNativePG's PgBouncer pods are read through the node readers, by CloudNativePG's label.
	if part, match, ok := p.NodeReadPods(); !ok || part != PoolerPart || match["cnpg.io/poolerName"] != u.GetName() {
		t.Errorf("NodeReadPods = %s %v %v", part, match, ok)
	}
	if _, _, ok := sidecar.NodeReadPods(); ok {
		t.Error("the operator's own PgBouncer serves its accounting itself")
	}
}

// mysqlBenchmark is tb against a MySQL server, with the server it resolves to.
func mysqlBenchmark(tb *benchv1.TunnelBenchmark) transport.Server {
	tb.Spec.Server.Engine, tb.Spec.Load.Builtin = benchv1.EngineMySQL, "oltp_point_select"
	s := server
	s.Engine, s.Port = benchv1.EngineMySQL, 3306
	return s
}

func TestMySQLPoolerSidecar(t *testing.T) {
	tb := benchmark(func(tb *benchv1.TunnelBenchmark) {
		tb.Spec.Load.ConnectionStorm = &benchv1.ConnectionStorm{Connections: 300}
	})
	mysqlServer := mysqlBenchmark(tb)
	tr := poolerSpec(&benchv1.PoolerTransport{Placement: "sidecar", PoolMode: "transaction", PoolSize: 3,
		MaxClientConnections: 50, ServerTLS: "verify-full"})
	c := transport.Context{Benchmark: tb, Spec: tr, Server: mysqlServer, Defaults: defaults}
	job, _ := transporttest.Job(t, c)
	pod := job.Spec.Template.Spec
	if len(pod.InitContainers) != 1 || pod.InitContainers[0].Name != MySQLPoolerContainer {
		t.Fatalf("init containers %+v", pod.InitContainers)
	}
	sc := pod.InitContainers[0]
	if sc.RestartPolicy == nil || *sc.RestartPolicy != corev1.ContainerRestartPolicyAlways || sc.StartupProbe == nil {
		t.Errorf("mysqlpool is not a native sidecar with a startup probe: %+v", sc)
	}
	for _, want := range []string{"mysqlpool", "--listen=127.0.0.1:6432", "--server=pg-rw:3306", "--pool-size=3",
		"--max-clients=50", "--server-tls=verify-full", "--server-ca=" + PoolerServerCADir + "/ca.crt", "--stats=127.0.0.1:14900"} {
		if !slices.Contains(sc.Args, want) {
			t.Errorf("sidecar args %v lack %q", sc.Args, want)
		}
	}
	assertCredentialsByReference(t, sc)
	for _, want := range []string{"--pooler=mysqlpool", "--pooler-metrics=127.0.0.1:14900", "--pooler-part=mysqlpool", "--storm=300"} {
		if !slices.Contains(pod.Containers[0].Args, want) {
			t.Errorf("runner args %v lack %q", pod.Containers[0].Args, want)
		}
	}
	e := env(&pod)
	if e["PGHOST"].Value != "127.0.0.1" || e["PGPORT"].Value != "6432" || e["PGSSLMODE"].Value != "disable" {
		t.Errorf("runner connects to %s:%s sslmode %s", e["PGHOST"].Value, e["PGPORT"].Value, e["PGSSLMODE"].Value)
	}
	p := pooler{c: c}
	if p.Blame(MySQLPoolerContainer) == "" || p.Hop().Port != 3306 {
		t.Errorf("blame %q, hop %+v", p.Blame(MySQLPoolerContainer), p.Hop())
	}
}

// TestMySQLPoolerService: the shared MySQL pooler runs next to the server behind a Service on
// MySQL's port, logs in to the server with the credentials Secret by reference, serves its counters
// and CPU to the runner only (its NetworkPolicy's ports), and the runner's connections go to it.
func TestMySQLPoolerService(t *testing.T) {
	tb := benchmark(func(tb *benchv1.TunnelBenchmark) {
		tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "pg-rw", Database: "app"}}
	})
	mysqlServer := mysqlBenchmark(tb)
	tr := poolerSpec(&benchv1.PoolerTransport{Placement: "service", PoolMode: "transaction", PoolSize: 2,
		MaxClientConnections: 50, ServerTLS: "verify-full"})
	c := transport.Context{Benchmark: tb, Spec: tr, Server: mysqlServer, Defaults: defaults, NetworkPolicies: true}
	p := pooler{c: c}
	dep := p.deployment()
	pc := dep.Spec.Template.Spec.Containers[0]
	for _, want := range []string{"mysqlpool", "--listen=0.0.0.0:6432", "--server=pg-rw:3306", "--pool-size=2", "--max-clients=50",
		"--server-tls=verify-full", "--server-ca=" + PoolerServerCADir + "/ca.crt", "--stats=0.0.0.0:14900"} {
		if !slices.Contains(pc.Args, want) {
			t.Errorf("pooler args %v lack %q", pc.Args, want)
		}
	}
	assertCredentialsByReference(t, pc)
	if pc.ReadinessProbe == nil || len(dep.Spec.Template.Spec.Volumes) == 0 {
		t.Errorf("pooler pod: readiness %+v, volumes %+v", pc.ReadinessProbe, dep.Spec.Template.Spec.Volumes)
	}
	svc := p.service()
	ports := map[string]int32{}
	for _, sp := range svc.Spec.Ports {
		ports[sp.Name] = sp.Port
	}
	if ports["mysql"] != 3306 || ports["stats"] != MySQLPoolerStatsPort || ports["cpu"] == 0 || ports["pgbouncer"] != 0 {
		t.Errorf("service ports %+v", svc.Spec.Ports)
	}
	peers, err := p.Peers()
	if err != nil || len(peers) != 3 {
		t.Fatalf("peers %v (%v): want the NetworkPolicy, the Service and the Deployment", peers, err)
	}
	if reason, msg := peers[2].Created(); reason == "" || !strings.Contains(msg, "the MySQL pooler") {
		t.Errorf("created %s %q", reason, msg)
	}
	job, _ := transporttest.Job(t, c)
	pod := job.Spec.Template.Spec
	if len(pod.InitContainers) != 0 {
		t.Errorf("a shared pooler has no sidecar: %+v", pod.InitContainers)
	}
	for _, want := range []string{"--pooler=mysqlpool", "--pooler-metrics=" + p.host() + ":14900", "--pooler-part=pooler"} {
		if !slices.Contains(pod.Containers[0].Args, want) {
			t.Errorf("runner args %v lack %q", pod.Containers[0].Args, want)
		}
	}
	e := env(&pod)
	if e["PGHOST"].Value != p.host() || e["PGPORT"].Value != "3306" || e["PGSSLMODE"].Value != "disable" {
		t.Errorf("runner connects to %s:%s sslmode %s", e["PGHOST"].Value, e["PGPORT"].Value, e["PGSSLMODE"].Value)
	}
	if h := p.Hop(); h.Host != p.host() || h.Port != 3306 || p.Blame(PoolerPart) == "" {
		t.Errorf("hop %+v, blame %q", h, p.Blame(PoolerPart))
	}
}

func TestPoolerRules(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mysql  bool
		mutate func(*benchv1.TunnelBenchmarkSpec, *benchv1.PoolerTransport)
		want   string // "" for none
	}{
		{"a MySQL pooler shares 2 connections among 8 clients", true, func(s *benchv1.TunnelBenchmarkSpec, _ *benchv1.PoolerTransport) {
			s.Load.Clients = 8
		}, ""},
		{"prepared statements pin every MySQL client", true, func(s *benchv1.TunnelBenchmarkSpec, _ *benchv1.PoolerTransport) {
			s.Load.Clients, s.Load.Protocol = 8, "prepared"
		}, "with spec.load.protocol prepared"},
		{"prepared statements with a connection each", true, func(s *benchv1.TunnelBenchmarkSpec, p *benchv1.PoolerTransport) {
			s.Load.Clients, s.Load.Protocol, p.PoolSize = 8, "prepared", 8
		}, ""},
		{"PgBouncer keeps prepared statements in transaction mode", false, func(s *benchv1.TunnelBenchmarkSpec, _ *benchv1.PoolerTransport) {
			s.Load.Clients, s.Load.Protocol = 8, "prepared"
		}, ""},
		{"more clients than the pooler admits", true, func(s *benchv1.TunnelBenchmarkSpec, p *benchv1.PoolerTransport) {
			s.Load.Clients, p.MaxClientConnections = 8, 4
		}, "pooler.maxClientConnections"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tb := benchmark(nil)
			if tt.mysql {
				mysqlBenchmark(tb)
			}
			p := &benchv1.PoolerTransport{Placement: "sidecar", PoolMode: "transaction", PoolSize: 2, MaxClientConnections: 100}
			tt.mutate(&tb.Spec, p)
			tb.Spec.Transports = []benchv1.TransportSpec{poolerSpec(p)}
			errs := poolerRules(&tb.Spec, 0, field.NewPath("spec", "transports").Index(0))
			switch {
			case tt.want == "" && len(errs) > 0:
				t.Errorf("refused: %v", errs)
			case tt.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.want)):
				t.Errorf("errors %v, want one with %q", errs, tt.want)
			}
		})
	}
}
