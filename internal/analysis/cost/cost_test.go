package cost

import (
	"strings"
	"testing"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
)

// TestPart: the arithmetic of one part's figures.
func TestPart(t *testing.T) {
	cpu := &report.CPU{UserSeconds: 1.5, SystemSeconds: 0.5, WindowSeconds: 10, Periods: 100, Throttled: 25, ThrottledSeconds: 1.25}
	p := Part(benchv1.PartClient, cpu, 40_000, 0.25)
	if p.CPUSeconds != 2 || *p.CPUMicrosPerTransaction != 50 || *p.Cores != 0.25 || *p.Utilization != 0.8 ||
		*p.ThrottledFraction != 0.25 || *p.ThrottledSeconds != 1.25 {
		t.Errorf("part %+v", p)
	}
	bare := Part(benchv1.PartClient, &report.CPU{UserSeconds: 1, WindowSeconds: 10}, 0, 0)
	if bare.CPUMicrosPerTransaction != nil || bare.Utilization != nil || bare.Cores != nil || bare.ThrottledFraction != nil {
		t.Errorf("figures without their inputs: %+v", bare)
	}
}

// TestLimiter: the thresholds, each side of them, and the order of the parts.
func TestLimiter(t *testing.T) {
	part := func(name string, used, cores float64, periods, throttled uint64) benchv1.PartCost {
		return Part(name, &report.CPU{UserSeconds: used, WindowSeconds: 10, Periods: periods, Throttled: throttled, ThrottledSeconds: 0.5},
			1000, cores)
	}
	tests := []struct {
		name  string
		parts []benchv1.PartCost
		want  string
		says  string
	}{
		{"a client at 95% of a 200m limit", []benchv1.PartCost{part("client", 1.9, 0.2, 0, 0)}, "client", "used 95% of the 0.2 cores"},
		{"a client at 85% of its limit", []benchv1.PartCost{part("client", 1.7, 0.2, 0, 0)}, "", ""},
		{"a client throttled in 30% of its periods at 60%", []benchv1.PartCost{part("client", 1.2, 0.2, 100, 30)}, "client",
			"30% of the scheduler's periods"},
		{"a client throttled in 5% of its periods", []benchv1.PartCost{part("client", 1.2, 0.2, 100, 5)}, "", ""},
		{"a roomy client on a 2-core node", []benchv1.PartCost{part("client", 9, 2, 0, 0)}, "", ""},
		{"cores unknown: no verdict", []benchv1.PartCost{part("client", 30, 0, 0, 0)}, "", ""},
		{"the first part that ran out", []benchv1.PartCost{part("client", 1, 2, 0, 0), part("tunnel-0", 9.5, 1, 0, 0),
			part("server", 19, 2, 0, 0)}, "tunnel-0", "tunnel-0 used 95%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Limiter(tt.parts)
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("limiter %+v, want none", got)
			case tt.want != "" && (got == nil || got.Part != tt.want || !strings.Contains(got.Evidence, tt.says)):
				t.Errorf("limiter %+v, want %s saying %q", got, tt.want, tt.says)
			}
		})
	}
}

// TestNetwork: a run at 80 % or more of clients / RTT is paced by the link; one below, or one
// without a link, is not.
func TestNetwork(t *testing.T) {
	tests := []struct {
		name    string
		tps     float64
		rttMs   float64
		clients int
		limited bool
	}{
		{"4 clients over 10 ms at 360 tps (90 % of 400)", 360, 10, 4, true},
		{"at 80 % exactly", 320, 10, 4, true},
		{"at 50 %: something else adds latency", 200, 10, 4, false},
		{"a LAN run: no link measured", 20000, 0, 4, false},
		{"a transaction of four round trips", 95, 10, 4, false},
	}
	for _, tt := range tests {
		got := Network(tt.tps, tt.rttMs, tt.clients)
		if (got != nil) != tt.limited || got != nil && (got.Part != benchv1.PartNetwork || !strings.Contains(got.Evidence, "measured RTT")) {
			t.Errorf("%s: %+v", tt.name, got)
		}
	}
}

// TestPool: a closed loop of c clients over p server connections, each transaction holding one
// for s: from c > p on the pool serves p / s and each client waits 1 - p/c of its time; the
// pooler's count of that wait names the pool from c/p = 1.11 on. The integration tests measure
// the wait itself (mysqlpool: 4 clients over 2 connections across a 10 ms link waited 3.96 s of
// 8 client-seconds).
func TestPool(t *testing.T) {
	const window = 10.0
	model := func(clients, servers int) float64 {
		return max(0, 1-float64(servers)/float64(clients)) * float64(clients) * window
	}
	tests := []struct {
		name             string
		clients, servers int
		wait             float64
		limited          bool
	}{
		{"8 clients over 4 connections (the issue's knee)", 8, 4, model(8, 4), true},
		{"5 over 4", 5, 4, model(5, 4), true},
		{"9 over 8: just past the threshold", 9, 8, model(9, 8), true},
		{"12 over 11: below it", 12, 11, model(12, 11), false},
		{"4 over 4: no client waits in the model", 4, 4, model(4, 4), false},
		{"4 over 4 with their first logins' wait (20 ms)", 4, 4, 0.02, false},
		{"2 over 4", 2, 4, model(2, 4), false},
		{"the MySQL pooler's measured run", 4, 2, 3.96, true},
	}
	for _, tt := range tests {
		got := Pool("mysqlpool", tt.wait, window, tt.clients, tt.servers)
		if tt.name == "the MySQL pooler's measured run" {
			got = Pool("mysqlpool", tt.wait, 2, tt.clients, tt.servers)
		}
		if (got != nil) != tt.limited || got != nil && (got.Part != "mysqlpool" || !strings.Contains(got.Evidence, "the pool was exhausted")) {
			t.Errorf("%s (wait %.2f s): %+v", tt.name, tt.wait, got)
		}
	}
	if Pool("pgbouncer", 1, 0, 4, 4) != nil || Pool("pgbouncer", 0, 10, 4, 4) != nil {
		t.Error("a limiter without a window or a wait")
	}
}

// TestWire: bytes per transaction and per row, both directions together.
func TestWire(t *testing.T) {
	w := &report.Wire{ReceivedBytes: 3_000_000, SentBytes: 1_000_000, WindowSeconds: 10}
	if got := Wire(w, 20_000, 0); got.ReceivedBytes != 3_000_000 || got.SentBytes != 1_000_000 || *got.BytesPerTransaction != 200 ||
		got.BytesPerRow != nil {
		t.Errorf("pgbench run: %+v", got)
	}
	if got := Wire(w, 0, 16_384); got.BytesPerTransaction != nil || *got.BytesPerRow != 244.1 {
		t.Errorf("copy run: %+v", got)
	}
	if Wire(nil, 100, 0) != nil {
		t.Error("figures without counters")
	}
}

// TestNode: the parts on one node together, each side of the threshold, and what cannot be judged.
func TestNode(t *testing.T) {
	tests := []struct {
		name   string
		parts  []Shared
		window float64
		cores  float64
		says   string
	}{
		{"client and server fill two cores", []Shared{{"client", 7.4}, {"server", 11.8}}, 10, 2,
			"the parts on node n1 used 96% of its 2 cores together (client 37%, server 59%; threshold 90%)"},
		{"client and server at 80%", []Shared{{"client", 6}, {"server", 10}}, 10, 2, ""},
		{"one part alone is Limiter's", []Shared{{"client", 19}}, 10, 2, ""},
		{"cores not known", []Shared{{"client", 7.4}, {"server", 11.8}}, 10, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Node("n1", tt.parts, tt.window, tt.cores)
			switch {
			case tt.says == "" && got != nil:
				t.Errorf("limiter %+v, want none", got)
			case tt.says != "" && (got == nil || got.Part != benchv1.PartNode || !strings.Contains(got.Evidence, tt.says)):
				t.Errorf("limiter %+v, want %q", got, tt.says)
			}
		})
	}
}
