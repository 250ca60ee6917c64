package transport

import (
	"slices"
	"strconv"
	"testing"
	"time"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/runspec"
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
