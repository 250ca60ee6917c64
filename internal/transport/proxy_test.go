package transport

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/transport/haproxy"
)

func proxyFor(t *testing.T, sslMode benchv1.InnerSSLMode) Transport {
	t.Helper()
	spec := benchv1.TransportSpec{Name: "lb", Type: benchv1.TransportProxy}
	if sslMode != "" {
		spec.Proxy = &benchv1.ProxyTransport{SSLMode: sslMode}
	}
	return guarded(t, spec)
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
	if len(run.Probes) != 1 || !strings.HasSuffix(run.Probes[0].URL, haproxy.StatsPath) {
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
