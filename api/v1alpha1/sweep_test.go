package v1alpha1

import (
	"fmt"
	"testing"
)

// TestAtPoint: the benchmark at a point carries the point's value where its parameter applies and
// nowhere else, has no sweep, and leaves the benchmark itself as it was.
func TestAtPoint(t *testing.T) {
	base := func(sweep *SweepSpec) *TunnelBenchmark {
		tb := &TunnelBenchmark{}
		tb.Spec.Transports = []TransportSpec{{Name: "direct", Type: TransportDirect}, {Name: "ssh", Type: TransportSSH},
			{Name: "pooler", Type: TransportPooler, Pooler: &PoolerTransport{Placement: PoolerSidecar, PoolSize: 20}}}
		tb.Spec.Load.Clients, tb.Spec.Load.Threads = 8, 4
		tb.Spec.Sweep = sweep
		return tb
	}
	tests := []struct {
		name                                   string
		sweep                                  *SweepSpec
		point                                  int
		clients, threads, tunnels, pool, label string
	}{
		{"no sweep", nil, 0, "8", "4", "0", "20", ""},
		{"clients below the threads", &SweepSpec{Clients: []int32{2, 16}}, 0, "2", "2", "0", "20", "clients=2"},
		{"clients above them", &SweepSpec{Clients: []int32{2, 16}}, 1, "16", "4", "0", "20", "clients=16"},
		{"tunnels", &SweepSpec{Tunnels: []int32{1, 4}}, 1, "8", "4", "4", "20", "tunnels=4"},
		{"pool size", &SweepSpec{PoolSize: []int32{1, 4}}, 0, "8", "4", "0", "1", "poolSize=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := base(tt.sweep)
			at := tb.AtPoint(tt.point)
			tunnels := int32(0)
			if s := at.Spec.Transports[1].SSH; s != nil {
				tunnels = s.Tunnels
			}
			got := []string{fmt.Sprint(at.Spec.Load.Clients), fmt.Sprint(at.Spec.Load.Threads), fmt.Sprint(tunnels),
				fmt.Sprint(at.Spec.Transports[2].Pooler.PoolSize), tb.PointName(tt.point)}
			want := []string{tt.clients, tt.threads, tt.tunnels, tt.pool, tt.label}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("clients, threads, tunnels, pool size, label = %v, want %v", got, want)
					break
				}
			}
			if at.Spec.Sweep != nil && tt.sweep != nil {
				t.Error("the benchmark at a point still has a sweep")
			}
			if tb.Spec.Load.Clients != 8 || tb.Spec.Transports[2].Pooler.PoolSize != 20 || tb.Spec.Sweep != tt.sweep {
				t.Error("AtPoint changed the benchmark itself")
			}
		})
	}
}
