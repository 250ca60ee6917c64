package vpn

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/testing/transporttest"
	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/vpn/wgtunnel"
)

func vpnFor(t *testing.T, sslMode benchv1.InnerSSLMode) transport.Transport {
	t.Helper()
	spec := benchv1.TransportSpec{Name: "wg", Type: benchv1.TransportVPN}
	if sslMode != "" {
		spec.VPN = &benchv1.VPNTransport{SSLMode: sslMode}
	}
	return transporttest.Of(t, spec)
}

func TestVPNPeers(t *testing.T) {
	peers, err := vpnFor(t, "").Peers()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, p := range peers {
		switch o := p.Object.(type) {
		case *corev1.Secret:
			kinds = append(kinds, "Secret")
			if err := p.Generate(); err != nil || len(o.Data[wgtunnel.GatewayPrivateKey]) == 0 || len(o.Data[wgtunnel.ClientPublicKey]) == 0 {
				t.Errorf("the keys were not generated: %v %v", err, o.Data)
			}
		case *corev1.Service:
			kinds = append(kinds, "Service")
			if o.Spec.Ports[0].Protocol != corev1.ProtocolUDP || o.Spec.Ports[0].Port != wgtunnel.ListenPort {
				t.Errorf("the gateway's Service must expose WireGuard's UDP port: %+v", o.Spec.Ports)
			}
		case *networkingv1.NetworkPolicy:
			kinds = append(kinds, "NetworkPolicy")
			if !slices.ContainsFunc(o.Spec.Ingress[0].Ports, func(p networkingv1.NetworkPolicyPort) bool {
				return *p.Protocol == corev1.ProtocolUDP && p.Port.IntValue() == wgtunnel.ListenPort
			}) {
				t.Errorf("the NetworkPolicy must admit the runners on UDP %d: %+v", wgtunnel.ListenPort, o.Spec.Ingress)
			}
		case *appsv1.Deployment:
			kinds = append(kinds, "Deployment")
			c := o.Spec.Template.Spec.Containers[0]
			args := strings.Join(c.Args, " ")
			if !strings.Contains(args, "wg-gateway") || !strings.Contains(args, "--target=pg-rw:5432") {
				t.Errorf("the gateway must forward to the server only: %s", args)
			}
			if p := c.SecurityContext; p == nil || p.Capabilities == nil || len(p.Capabilities.Add) != 0 || *p.AllowPrivilegeEscalation {
				t.Errorf("the gateway must stay restricted: %+v", p)
			}
		}
	}
	if want := []string{"Secret", "Service", "NetworkPolicy", "Deployment"}; !slices.Equal(kinds, want) {
		t.Errorf("peers %v, want %v in that order", kinds, want)
	}
}

func TestVPNPod(t *testing.T) {
	var run runspec.Run
	pod, err := vpnFor(t, "require").Pod(&run)
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Sidecars) != 1 || pod.Sidecars[0].Name != VPNClientContainer {
		t.Fatalf("one WireGuard sidecar: %+v", pod.Sidecars)
	}
	args := strings.Join(pod.Sidecars[0].Args, " ")
	if !strings.Contains(args, "--endpoint="+vpnFor(t, "").Hop().Address()) {
		t.Errorf("the client must dial the gateway's Service: %s", args)
	}
	env := map[string]string{}
	for _, e := range pod.Env {
		env[e.Name] = e.Value
	}
	if env["PGHOST"] != "127.0.0.1" || env["PGSSLMODE"] != "require" {
		t.Errorf("libpq must go through the tunnel's loopback end with the asked sslmode: %v", env)
	}
	gateway := func(p runspec.CPUPart) bool { return p.Name == transport.GatewayPart }
	if len(run.Probes) != 1 || run.Tunnels != 1 || !slices.ContainsFunc(run.CPUParts, gateway) {
		t.Errorf("the run must read the counters and the gateway's CPU: %+v", run)
	}
	if err := run.Validate(); err != nil && strings.Contains(err.Error(), "probes") {
		t.Errorf("the probe is not one the runner accepts: %v", err)
	}
}

func TestVPNRecord(t *testing.T) {
	counters := func(c wgtunnel.Counters) string { b, _ := json.Marshal(c); return string(b) }
	tests := []struct {
		name  string
		probe *report.Probe
		want  []string
	}{
		{"no probe", nil, nil},
		{"counted", &report.Probe{Name: vpnProbe,
			Before: counters(wgtunnel.Counters{TxBytes: 100, RxBytes: 50, LastHandshakeUnix: 1_800_000_000}),
			After:  counters(wgtunnel.Counters{TxBytes: 1100, RxBytes: 2050, LastHandshakeUnix: 1_800_000_000, Endpoint: "10.96.0.9:51820"})},
			[]string{"sent 1000, received 2000", "last at 2027-01-15T08:00:00Z, with 10.96.0.9:51820"}},
		{"unreadable", &report.Probe{Name: vpnProbe, Error: "connection refused"}, []string{"not read: connection refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &report.Report{}
			if tt.probe != nil {
				rep.Probes = []report.Probe{*tt.probe}
			}
			var out benchv1.TransportResult
			vpnFor(t, "").Record(rep, &out)
			var got []string
			for _, e := range out.Evidence {
				got = append(got, e.Value)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("evidence %q, want %q", got, tt.want)
			}
		})
	}
}
