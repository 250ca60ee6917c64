package transport

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
)

// TestMeasureSidecars: each sidecar runs its own command under the CPU-serving wrapper, on a port
// of its own, and the runner is told to sample it under the container's name.
func TestMeasureSidecars(t *testing.T) {
	spec := benchv1.TransportSpec{Name: "ssh", Type: benchv1.TransportSSH, SSH: &benchv1.SSHTransport{Tunnels: 2}}
	run := runspec.Run{Tunnels: 1}
	pod, err := forSpec(t, benchmark(nil), spec).Pod(&run)
	if err != nil {
		t.Fatal(err)
	}
	before := slices.Clone(pod.Sidecars)
	MeasureSidecars(&pod, &run)
	// The gateway's part first (the ssh transport's own, on its Service), then the sidecars'.
	if len(pod.Sidecars) != 2 || len(run.CPUParts) != 3 || run.CPUParts[0].Name != GatewayPart ||
		run.CPUParts[0].URL() != "http://bench-ssh-gateway-fe1bde.db.svc:14600/cpu" {
		t.Fatalf("%d sidecars, parts %+v", len(pod.Sidecars), run.CPUParts)
	}
	for i, c := range pod.Sidecars {
		want := append([]string{"sidecar", "--cpu-port=" + strconv.Itoa(runspec.CPUStatsBasePort+i), "--"},
			append(before[i].Command, before[i].Args...)...)
		if !slices.Equal(c.Command, []string{"tunnelbench-runner"}) || !slices.Equal(c.Args, want) {
			t.Errorf("sidecar %s runs %v %v, want tunnelbench-runner %v", c.Name, c.Command, c.Args, want)
		}
		if p := run.CPUParts[1+i]; p.Name != c.Name || p.Host != "" || p.Port != runspec.CPUStatsBasePort+i {
			t.Errorf("part %+v for sidecar %s", p, c.Name)
		}
	}
	run.Load = runspec.Load{Builtin: "select-only", Duration: time.Second}
	if err := run.Validate(); err != nil {
		t.Errorf("the runner's contract is invalid: %v", err)
	}
}

// TestPeersServeTheirCPU: the SSH gateway's sshd and a shared PgBouncer run under the wrapper on
// the peer port, their Services expose it, and the runner is told to sample them.
func TestPeersServeTheirCPU(t *testing.T) {
	for _, tt := range []struct {
		spec benchv1.TransportSpec
		part string
	}{
		{benchv1.TransportSpec{Name: "ssh", Type: benchv1.TransportSSH}, GatewayPart},
		{benchv1.TransportSpec{Name: "pooler", Type: benchv1.TransportPooler}, TestPoolerPart},
	} {
		t.Run(tt.spec.Name, func(t *testing.T) {
			// An external server: a CloudNativePG server's shared pooler is CloudNativePG's own.
			tb := benchmark(func(tb *benchv1.TunnelBenchmark) {
				tb.Spec.Server = benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: "pg-rw", Database: "app"}}
			})
			tr := forSpec(t, tb, tt.spec)
			run := runspec.Run{Tunnels: 1}
			if _, err := tr.Pod(&run); err != nil {
				t.Fatal(err)
			}
			if len(run.CPUParts) != 1 || run.CPUParts[0].Name != tt.part || run.CPUParts[0].Port != runspec.PeerCPUPort ||
				!strings.HasSuffix(run.CPUParts[0].Host, ".db.svc") {
				t.Errorf("parts %+v", run.CPUParts)
			}
			peers, err := tr.Peers()
			if err != nil {
				t.Fatal(err)
			}
			served, exposed := false, false
			for _, p := range peers {
				switch o := p.Object.(type) {
				case *appsv1.Deployment:
					c := o.Spec.Template.Spec.Containers[0]
					served = slices.Equal(c.Command, []string{"tunnelbench-runner"}) && len(c.Args) > 2 &&
						c.Args[0] == "sidecar" && c.Args[1] == "--cpu-listen=:14600"
				case *corev1.Service:
					exposed = slices.ContainsFunc(o.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == runspec.PeerCPUPort })
				}
			}
			if !served || !exposed {
				t.Errorf("the peer serves its CPU: %v, its Service exposes it: %v", served, exposed)
			}
		})
	}
}
