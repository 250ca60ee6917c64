package transport

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
)

// TestLinkSitsOnEachTransportsHop: with the userspace emulator, the runner pod's first native
// sidecar is the link proxy towards the transport's remote side, and whatever dialled that side
// dials the proxy instead; libpq keeps the far end's name for TLS. Without a link, nothing of it.
func TestLinkSitsOnEachTransportsHop(t *testing.T) {
	tb := benchmark(nil)
	gateway, pooler := tb.GatewayName()+".db.svc", tb.PoolerName("p")+".db.svc"
	wan := benchv1.Link{Emulator: benchv1.EmulatorUserspace, RTT: 10 * time.Millisecond, BitsPerSecond: 50_000_000}
	tests := []struct {
		name     string
		spec     benchv1.TransportSpec
		upstream string
		// dialsProxy finds, in the pod, the client side of the hop pointed at the proxy.
		dialsProxy func(p specs.Pod) bool
	}{
		{"direct", benchv1.TransportSpec{Name: "d", Type: "direct"}, "pg-rw:5432", libpqDialsProxy("pg-rw")},
		{"tls", benchv1.TransportSpec{Name: "t", Type: "tls"}, "pg-rw:5432", libpqDialsProxy("pg-rw")},
		{"shared pooler", benchv1.TransportSpec{Name: "p", Type: "pooler"}, pooler + ":5432", libpqDialsProxy(pooler)},
		{"sidecar pooler", benchv1.TransportSpec{Name: "pool", Type: benchv1.TransportPooler,
			Pooler: &benchv1.PoolerTransport{Placement: "sidecar", ServerTLS: "require"}}, "pg-rw:5432",
			func(p specs.Pod) bool {
				i := slices.IndexFunc(p.Sidecars, func(c corev1.Container) bool { return c.Name == "pgbouncer" })
				return i >= 0 && slices.Contains(p.Sidecars[i].Args, "--server=127.0.0.1:14432") &&
					env(&corev1.PodSpec{Containers: []corev1.Container{{Env: p.Env}}})["PGHOSTADDR"].Value == ""
			}},
		{"ssh", benchv1.TransportSpec{Name: "s", Type: "ssh", SSH: &benchv1.SSHTransport{Tunnels: 2}}, gateway + ":2222",
			func(p specs.Pod) bool {
				for _, c := range p.Sidecars {
					if !strings.HasPrefix(c.Name, "tunnel-") {
						continue
					}
					args := strings.Join(c.Args, " ")
					if !strings.Contains(args, "-p 14432") || !strings.HasSuffix(args, "@127.0.0.1") ||
						!strings.Contains(args, "HostKeyAlias=["+gateway+"]:2222") {
						return false
					}
				}
				return true
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Context{Benchmark: tb, Spec: tt.spec, Server: server, Defaults: defaults, Link: wan}
			pod, run := linkedPod(t, c)
			if len(pod.Sidecars) == 0 || pod.Sidecars[0].Name != "link" {
				t.Fatalf("the link proxy is not the first sidecar: %v", pod.Sidecars)
			}
			proxy := pod.Sidecars[0]
			args := strings.Join(proxy.Args, " ")
			want := "link --listen=127.0.0.1:14432 --upstream=" + tt.upstream + " --stats=127.0.0.1:14433 --rtt=10ms --bandwidth=50000000"
			if args != want {
				t.Errorf("link proxy args %q, want %q", args, want)
			}
			// The runner reads what the link held at the load's ends, on the pod's loopback only.
			if !slices.Contains(run.Probes, runspec.Probe{Name: runspec.LinkProbe, URL: "http://127.0.0.1:14433/"}) {
				t.Errorf("probes %+v: want the link's counters", run.Probes)
			}
			if sc := proxy.SecurityContext; sc == nil || sc.Privileged != nil && *sc.Privileged || sc.AllowPrivilegeEscalation == nil ||
				*sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
				t.Errorf("the link proxy must run unprivileged, without capabilities: %+v", sc)
			}
			if proxy.StartupProbe == nil || proxy.RestartPolicy == nil || *proxy.RestartPolicy != corev1.ContainerRestartPolicyAlways {
				t.Error("the link proxy must be a native sidecar with a startup probe")
			}
			if !tt.dialsProxy(pod) {
				t.Errorf("the hop's client side does not dial the proxy: env %v sidecars %v", pod.Env, pod.Sidecars)
			}
			if run.Link != (runspec.Link{RTT: wan.RTT, BitsPerSecond: wan.BitsPerSecond}) {
				t.Errorf("the runner measures against %+v", run.Link)
			}
			if err := run.Validate(); err != nil {
				t.Error(err)
			}

			// The same transport on the LAN: no proxy, nothing rerouted, nothing measured.
			c.Link = benchv1.Link{}
			pod, run = linkedPod(t, c)
			if slices.ContainsFunc(pod.Sidecars, func(c corev1.Container) bool { return c.Name == "link" }) ||
				run.Link.Emulated() || strings.Contains(strings.Join(append(containerArgs(pod), ConnInfo(pod.Env)), " "), "14432") {
				t.Errorf("a LAN transport got a link: %v %+v", pod.Sidecars, run.Link)
			}
		})
	}
}

func libpqDialsProxy(host string) func(p specs.Pod) bool {
	return func(p specs.Pod) bool {
		e := env(&corev1.PodSpec{Containers: []corev1.Container{{Env: p.Env}}})
		return e["PGHOST"].Value == host && e["PGHOSTADDR"].Value == "127.0.0.1" && e["PGPORT"].Value == "14432"
	}
}

func containerArgs(p specs.Pod) []string {
	var out []string
	for _, c := range p.Sidecars {
		out = append(out, c.Args...)
	}
	return out
}

// linkedPod builds a transport's runner pod and contract as the controller does, the emulated link
// included (WithLink).
func linkedPod(t *testing.T, c Context) (specs.Pod, runspec.Run) {
	t.Helper()
	tr, err := For(c)
	if err != nil {
		t.Fatal(err)
	}
	run := specs.RunFor(c.Benchmark, false, time.Minute)
	pod, err := tr.Pod(&run)
	if err != nil {
		t.Fatal(err)
	}
	WithLink(c, tr, &pod, &run)
	return pod, run
}

// TestLinkHeld: what the link held between the runner's two reads, and nothing from a probe that
// failed, is not the link's, or went backwards (a link restarted between the reads).
func TestLinkHeld(t *testing.T) {
	probe := func(before, after, err string) *report.Report {
		return &report.Report{Probes: []report.Probe{{Name: runspec.LinkProbe, Before: before, After: after, Error: err}}}
	}
	for _, tc := range []struct {
		name string
		rep  *report.Report
		want time.Duration
		ok   bool
	}{
		{"read", probe("held_nanoseconds 1000\n", "held_nanoseconds 4001000\n", ""), 4 * time.Millisecond, true},
		{"no probe", &report.Report{}, 0, false},
		{"failed", probe("held_nanoseconds 1\n", "", "connection refused"), 0, false},
		{"not the link's", probe("<html>", "held_nanoseconds 5\n", ""), 0, false},
		{"backwards", probe("held_nanoseconds 9\n", "held_nanoseconds 5\n", ""), 0, false},
	} {
		if got, ok := LinkHeld(tc.rep); got != tc.want || ok != tc.ok {
			t.Errorf("%s: LinkHeld = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
