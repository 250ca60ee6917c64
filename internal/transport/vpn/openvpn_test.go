package vpn

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/contract/report"
	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/testing/transporttest"
	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/vpn/openvpn"
)

func openVPNSpec() benchv1.TransportSpec {
	return benchv1.TransportSpec{Name: "ovpn", Type: benchv1.TransportVPN, VPN: &benchv1.VPNTransport{Kind: benchv1.VPNOpenVPN}}
}

func openVPNFor(t *testing.T) transport.Transport {
	t.Helper()
	return transporttest.Of(t, openVPNSpec())
}

// tunOnly reports whether c runs as root with the TUN device's capabilities and nothing more.
func tunOnly(c corev1.Container) bool {
	s := c.SecurityContext
	return s != nil && s.Capabilities != nil && *s.RunAsUser == 0 && !*s.AllowPrivilegeEscalation &&
		slices.Equal(s.Capabilities.Add, []corev1.Capability{"NET_ADMIN", "MKNOD", "SETUID", "SETGID"}) &&
		(s.Privileged == nil || !*s.Privileged)
}

func TestOpenVPNPeers(t *testing.T) {
	peers, err := openVPNFor(t).Peers()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range peers {
		switch o := p.Object.(type) {
		case *corev1.Secret:
			if err := p.Generate(); err != nil || len(o.Data[openvpn.GatewayKey]) == 0 || len(o.Data[openvpn.ClientCert]) == 0 {
				t.Errorf("the certificates were not made: %v", err)
			}
		case *corev1.Service:
			if o.Spec.Ports[0].Protocol != corev1.ProtocolUDP || o.Spec.Ports[0].Port != openvpn.ListenPort {
				t.Errorf("the gateway's Service must expose OpenVPN's UDP port: %+v", o.Spec.Ports)
			}
		case *appsv1.Deployment:
			c := o.Spec.Template.Spec.Containers[0]
			args := strings.Join(c.Args, " ")
			if !strings.Contains(args, "ovpn-gateway") || !strings.Contains(args, "--target=pg-rw:5432") {
				t.Errorf("the gateway must forward to the server only: %s", args)
			}
			if !tunOnly(c) {
				t.Errorf("the gateway runs as root with the TUN device's capabilities only: %+v", c.SecurityContext)
			}
			keys := o.Spec.Template.Spec.Volumes[1].Secret.Items
			if slices.ContainsFunc(keys, func(k corev1.KeyToPath) bool { return k.Key == openvpn.ClientKey }) {
				t.Errorf("the gateway must not mount the client's key: %+v", keys)
			}
		}
	}
	if len(peers) != 4 {
		t.Errorf("%d peers, want the Secret, Service, NetworkPolicy and Deployment", len(peers))
	}
}

func TestOpenVPNPod(t *testing.T) {
	var run runspec.Run
	pod, err := openVPNFor(t).Pod(&run)
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Sidecars) != 1 || pod.Sidecars[0].Name != OpenVPNClientContainer || !tunOnly(pod.Sidecars[0]) {
		t.Fatalf("one OpenVPN sidecar with the TUN device's capabilities: %+v", pod.Sidecars)
	}
	c := pod.Sidecars[0]
	args := strings.Join(c.Args, " ")
	if !strings.Contains(args, "--remote="+openVPNFor(t).Hop().Address()) || !strings.Contains(args, "--gateway-name=") {
		t.Errorf("the client must dial the gateway's Service and pin its name: %s", args)
	}
	if probe := strings.Join(c.StartupProbe.Exec.Command, " "); !strings.HasSuffix(probe, "probe 10.202.0.1:5432") {
		t.Errorf("the runner must wait for the far end of the tunnel: %s", probe)
	}
	env := map[string]string{}
	for _, e := range pod.Env {
		env[e.Name] = e.Value
	}
	if env["PGHOST"] != "10.202.0.1" || env["PGPORT"] != "5432" {
		t.Errorf("libpq must connect to the gateway's tunnel address: %v", env)
	}
	if len(run.Probes) != 1 || run.Probes[0].Name != openVPNProbe {
		t.Errorf("the run must read the client's counters: %+v", run.Probes)
	}
	keys := pod.Volumes[0].Secret.Items
	if slices.ContainsFunc(keys, func(k corev1.KeyToPath) bool { return k.Key == openvpn.GatewayKey }) {
		t.Errorf("the runner pod must not mount the gateway's key: %+v", keys)
	}
}

func TestOpenVPNRecordAndDescribe(t *testing.T) {
	counters := func(c openvpn.Counters) string { b, _ := json.Marshal(c); return string(b) }
	rep := &report.Report{Probes: []report.Probe{{Name: openVPNProbe,
		Before: counters(openvpn.Counters{Up: true, TunRead: 100, TunWrite: 200, LinkRead: 300, LinkWrite: 400}),
		After: counters(openvpn.Counters{Up: true, DataCipher: "AES-256-GCM", ControlChannel: "TLSv1.3 TLS_AES_256_GCM_SHA384",
			TunRead: 1100, TunWrite: 2200, LinkRead: 3300, LinkWrite: 4400})}}}
	var out benchv1.TransportResult
	tr := openVPNFor(t)
	tr.Record(rep, &out)
	var got []string
	for _, e := range out.Evidence {
		got = append(got, e.Value)
	}
	want := []string{"AES-256-GCM", "TLSv1.3 TLS_AES_256_GCM_SHA384", "TUN 1000 out, 2000 in; UDP 4000 sent, 3000 received"}
	if !slices.Equal(got, want) {
		t.Errorf("evidence %q, want %q", got, want)
	}
	if d := tr.Describe(&out); d != "OpenVPN (kernel TUN, UDP, AES-256-GCM)" {
		t.Errorf("Describe = %q", d)
	}
}
