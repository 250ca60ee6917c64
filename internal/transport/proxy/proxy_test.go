package proxy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tunnelbench/tunnelbench/api/conditions"
	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler"
)

var server = transport.Server{Host: "pg-rw", Port: 5432, Database: "app", CredentialsSecret: "pg-app",
	UsernameKey: "username", PasswordKey: "password", CASecret: "pg-ca", CAKey: "ca.crt"}

// forSpec is a transport of a benchmark of these transports, built as the reconciler builds it
// (with NetworkPolicies).
func forSpec(t *testing.T, spec benchv1.TransportSpec, all ...benchv1.TransportSpec) transport.Transport {
	t.Helper()
	tb := &benchv1.TunnelBenchmark{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "db", UID: "uid-1"},
		Spec: benchv1.TunnelBenchmarkSpec{
			Server:     benchv1.ServerSpec{CNPG: &benchv1.CNPGServer{ClusterName: "pg"}},
			Transports: append([]benchv1.TransportSpec{spec}, all...),
			Load:       benchv1.LoadSpec{Builtin: "select-only", Clients: 4, Threads: 2},
		},
	}
	tr, err := transport.For(transport.Context{Benchmark: tb, Spec: spec, Server: server, NetworkPolicies: true,
		Defaults: specs.RunnerDefaults{Image: "runner:1", PullPolicy: corev1.PullIfNotPresent, WaitTimeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func proxyFor(t *testing.T, sslMode benchv1.InnerSSLMode) transport.Transport {
	t.Helper()
	spec := benchv1.TransportSpec{Name: "lb", Type: benchv1.TransportProxy}
	if sslMode != "" {
		spec.Proxy = &benchv1.ProxyTransport{SSLMode: sslMode}
	}
	return forSpec(t, spec)
}

// peerKinds names the peers' kinds, in order.
func peerKinds(t *testing.T, tr transport.Transport) []string {
	t.Helper()
	peers, err := tr.Peers()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, p := range peers {
		kinds = append(kinds, strings.TrimPrefix(fmt.Sprintf("%T", p.Object), "*v1."))
	}
	return kinds
}

func TestProxyPeersAndPod(t *testing.T) {
	peers, err := proxyFor(t, "").Peers()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, p := range peers {
		switch o := p.Object.(type) {
		case *corev1.Service:
			kinds = append(kinds, "Service")
		case *networkingv1.NetworkPolicy:
			kinds = append(kinds, "NetworkPolicy")
			if len(o.Spec.Ingress[0].Ports) != 3 {
				t.Errorf("the runners reach the proxy, its statistics and its CPU only: %+v", o.Spec.Ingress[0].Ports)
			}
		case *appsv1.Deployment:
			kinds = append(kinds, "Deployment")
			c := o.Spec.Template.Spec.Containers[0]
			if !strings.Contains(strings.Join(c.Args, " "), "-- /usr/sbin/haproxy -db -f "+proxyConfig) ||
				!strings.Contains(c.Env[len(c.Env)-1].Value, "server postgres pg-rw:5432\n") {
				t.Errorf("HAProxy must forward to the server only: %v %v", c.Args, c.Env)
			}
			if o.Labels[benchv1.LabelTransport] != "lb" {
				t.Errorf("the proxy serves its transport only: labels %v", o.Labels)
			}
		}
	}
	if want := []string{"Service", "NetworkPolicy", "Deployment"}; !slices.Equal(kinds, want) {
		t.Errorf("peers %v, want %v", kinds, want)
	}
	var run runspec.Run
	pod, err := proxyFor(t, "verify-ca").Pod(&run)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, e := range pod.Env {
		env[e.Name] = e.Value
	}
	if !strings.HasPrefix(env["PGHOST"], "bench-lb-proxy-") || env["PGSSLMODE"] != "verify-ca" || env["PGSSLROOTCERT"] == "" {
		t.Errorf("libpq must reach the proxy with TLS through it: %v", env)
	}
	if len(run.Probes) != 1 || !strings.HasSuffix(run.Probes[0].URL, StatsPath) {
		t.Errorf("the run must read the proxy's counters: %+v", run.Probes)
	}
}

func TestProxyRecord(t *testing.T) {
	const header = "# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ\n"
	csv := func(front, back string) string {
		return header + "postgres,FRONTEND,,,0,1,4096," + front + ",,,,\nserver,postgres,0,0,0,1,," + back + ",,0\n" +
			"server,BACKEND,0,0,0,1,410," + back + ",,0\n"
	}
	rep := &report.Report{Probes: []report.Probe{{Name: proxyProbe,
		Before: csv("10,100,200", "10,100,200,0,0,0,1"), After: csv("310,4100,9200", "310,4100,9200,0,0,0,3")}}}
	var out benchv1.TransportResult
	proxyFor(t, "").Record(rep, &out)
	got := map[string]string{}
	for _, e := range out.Evidence {
		got[e.Name] = e.Value
	}
	if got["haproxy connections during the load"] != "300 from clients, 300 to the server, 2 failed" ||
		got["haproxy bytes during the load"] != "from clients 4000, to clients 9000" {
		t.Errorf("evidence %v", got)
	}
}

func TestProxyBlameAndDescribe(t *testing.T) {
	tr := proxyFor(t, "")
	for part, want := range map[string]string{Component: conditions.ReasonProxyUnavailable,
		pooler.PoolerComponent: "", transport.LinkContainer: conditions.ReasonNetworkEmulationFailed} {
		if got := transport.BrokenReason(tr, part); got != want {
			t.Errorf("a broken %s: %q, want %q", part, got, want)
		}
	}
	res := &benchv1.TransportResult{TLS: &benchv1.NegotiatedTLS{Version: "TLSv1.3", Cipher: "X"}}
	if got := tr.Describe(res); got != "TLSv1.3 X; HAProxy (TCP mode)" {
		t.Errorf("Describe = %q", got)
	}
}

// A sidecar pooler over the proxy: its server connections cross the proxy, the proxy's peers
// serve it, and a broken proxy is the proxy's.
func TestPoolerOverProxy(t *testing.T) {
	inner := benchv1.TransportSpec{Name: "lb", Type: benchv1.TransportProxy}
	spec := benchv1.TransportSpec{Name: "pooled", Type: benchv1.TransportPooler, Pooler: &benchv1.PoolerTransport{
		Placement: benchv1.PoolerSidecar, Over: inner.Name, ServerTLS: benchv1.ServerTLSRequire}}
	if problems := transport.Validate(&benchv1.TunnelBenchmarkSpec{Transports: []benchv1.TransportSpec{inner, spec},
		Load: benchv1.LoadSpec{Clients: 4}}); len(problems) != 0 {
		t.Errorf("a pooler may run over the proxy: %v", problems)
	}
	tr := forSpec(t, spec, inner)
	var run runspec.Run
	pod, err := tr.Pod(&run)
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Sidecars) != 1 || pod.Sidecars[0].Name != pooler.PoolerContainer ||
		!strings.Contains(strings.Join(pod.Sidecars[0].Args, " "), "--server=bench-lb-proxy-") {
		t.Errorf("the pooler must connect through the proxy: %+v", pod.Sidecars)
	}
	if got, want := peerKinds(t, tr), []string{"Service", "NetworkPolicy", "Deployment"}; !slices.Equal(got, want) {
		t.Errorf("peers %v, want the proxy's %v", got, want)
	}
	if tr.Hop() != proxyFor(t, "").Hop() {
		t.Errorf("the link sits on the proxy's hop, not %+v", tr.Hop())
	}
	if got := tr.Blame(Component); got != conditions.ReasonProxyUnavailable {
		t.Errorf("a broken proxy under the pooler: %q", got)
	}
}
