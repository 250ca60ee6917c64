package v1alpha1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseBandwidth(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{in: "100Kbit", want: 100_000},
		{in: "50Mbit", want: 50_000_000},
		{in: "1Gbit", want: 1_000_000_000},
		{in: "1500Kbit", want: 1_500_000},
		{in: "50", wantErr: true},
		{in: "50MB", wantErr: true},
		{in: "1.5Mbit", wantErr: true},
		{in: "0Mbit", wantErr: true},
		{in: "50mbit", wantErr: true},
		{in: "99999999999Gbit", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseBandwidth(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseBandwidth(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestNetworkFor: a transport's own network replaces the benchmark's whole, `{}` included.
func TestNetworkFor(t *testing.T) {
	ms := func(n int) *metav1.Duration { return &metav1.Duration{Duration: time.Duration(n) * time.Millisecond} }
	wan := &NetworkSpec{RTT: ms(10), Jitter: ms(2), Bandwidth: "50Mbit"}
	tests := []struct {
		name      string
		benchmark *NetworkSpec
		transport *NetworkSpec
		want      Link
	}{
		{"none", nil, nil, Link{}},
		{"the benchmark's", wan, nil,
			Link{Emulator: EmulatorUserspace, RTT: 10 * time.Millisecond, Jitter: 2 * time.Millisecond, BitsPerSecond: 50_000_000}},
		{"a LAN transport in a WAN benchmark", wan, &NetworkSpec{}, Link{Emulator: EmulatorUserspace}},
		{"the transport's own", wan, &NetworkSpec{Bandwidth: "1Gbit", Emulator: EmulatorChaosMesh},
			Link{Emulator: EmulatorChaosMesh, BitsPerSecond: 1_000_000_000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &TunnelBenchmark{Spec: TunnelBenchmarkSpec{Network: tt.benchmark}}
			got, err := tb.NetworkFor(TransportSpec{Network: tt.transport})
			if err != nil || got != tt.want {
				t.Fatalf("NetworkFor = %+v, %v; want %+v", got, err, tt.want)
			}
			if got.Emulated() != (tt.want.RTT > 0 || tt.want.BitsPerSecond > 0) {
				t.Errorf("Emulated = %v", got.Emulated())
			}
		})
	}
}
