package admission

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

func bench(server benchv1.ServerSpec, transports ...benchv1.TransportSpec) *benchv1.TunnelBenchmark {
	if len(transports) == 0 {
		transports = []benchv1.TransportSpec{{Name: "direct", Type: benchv1.TransportDirect}}
	}
	return &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "b"},
		Spec: benchv1.TunnelBenchmarkSpec{Server: server, Transports: transports}}
}

func external(host string) benchv1.ServerSpec {
	return benchv1.ServerSpec{External: &benchv1.ExternalServer{Host: host, Database: "app",
		CredentialsSecret: benchv1.LocalObjectReference{Name: "creds"}, CASecret: &benchv1.LocalObjectReference{Name: "ca"}}}
}

var (
	cnpg       = benchv1.ServerSpec{CNPG: &benchv1.CNPGServer{ClusterName: "pg"}}
	verifyFull = benchv1.TransportSpec{Name: "tls", Type: benchv1.TransportTLS,
		TLS: &benchv1.TLSTransport{SSLMode: benchv1.SSLModeVerifyFull}}
	tlsRequire = benchv1.TransportSpec{Name: "tls", Type: benchv1.TransportTLS, TLS: &benchv1.TLSTransport{SSLMode: benchv1.SSLModeRequire}}
	clientCert = benchv1.TransportSpec{Name: "mtls", Type: benchv1.TransportTLS, TLS: &benchv1.TLSTransport{
		SSLMode: benchv1.SSLModeRequire, ClientCertSecret: &benchv1.LocalObjectReference{Name: "client-tls"}}}
	chaosLink   = &benchv1.NetworkSpec{Emulator: benchv1.EmulatorChaosMesh, Bandwidth: "1Mbit"}
	userspaceIt = &benchv1.NetworkSpec{Emulator: benchv1.EmulatorUserspace, Bandwidth: "1Mbit"}
)

// pooledAt is a pooler transport placed at placement.
func pooledAt(placement benchv1.PoolerPlacement) benchv1.TransportSpec {
	return benchv1.TransportSpec{Name: "pooled", Type: benchv1.TransportPooler, Pooler: &benchv1.PoolerTransport{Placement: placement}}
}

// TestRequired: every Secret, issuer, managed cluster and foreign namespace a spec names becomes
// an access the creator must hold, named by the field that asked for it; nothing else does.
func TestRequired(t *testing.T) {
	withTLS := func(tb *benchv1.TunnelBenchmark, kind string) *benchv1.TunnelBenchmark {
		tb.Spec.TLS = &benchv1.BenchmarkTLS{IssuerRef: benchv1.IssuerReference{Name: "corp-ca", Kind: kind}}
		return tb
	}
	withNetwork := func(tb *benchv1.TunnelBenchmark, n *benchv1.NetworkSpec) *benchv1.TunnelBenchmark {
		tb.Spec.Network = n
		return tb
	}
	tests := []struct {
		name string
		tb   *benchv1.TunnelBenchmark
		want []string
	}{
		{"cnpg, nothing verifies the server: its credentials", bench(cnpg, tlsRequire),
			[]string{`spec.server.cnpg.clusterName: "get" on secrets team-a/pg-app`}},
		{"cnpg, verify-full: its CA too", bench(cnpg, verifyFull), []string{
			`spec.server.cnpg.clusterName: "get" on secrets team-a/pg-app`,
			`spec.server.cnpg.clusterName: "get" on secrets team-a/pg-ca`}},
		{"external with a client certificate", bench(external("db.example.com"), clientCert), []string{
			`spec.server.external.credentialsSecret: "get" on secrets team-a/creds`,
			`spec.transports[0]: "get" on secrets team-a/client-tls`}},
		{"managed: a Cluster made for the benchmark, no Secret of the user's",
			bench(benchv1.ServerSpec{Managed: &benchv1.ManagedServer{Instances: 1}}),
			[]string{`spec.server.managed: "create" on clusters.postgresql.cnpg.io in namespace team-a`}},
		{"an Issuer: Certificates in the namespace", withTLS(bench(cnpg), "Issuer"), []string{
			`spec.server.cnpg.clusterName: "get" on secrets team-a/pg-app`,
			`spec.tls.issuerRef: "create" on certificates.cert-manager.io in namespace team-a`}},
		{"a ClusterIssuer: used by name", withTLS(bench(cnpg), "ClusterIssuer"), []string{
			`spec.server.cnpg.clusterName: "get" on secrets team-a/pg-app`,
			`spec.tls.issuerRef: "create" on certificates.cert-manager.io in namespace team-a`,
			`spec.tls.issuerRef: "use" on clusterissuers.cert-manager.io corp-ca`}},
		{"a chaos-mesh link to a Service of another namespace", withNetwork(bench(external("db.victim.svc")), chaosLink), []string{
			`spec.server.external.credentialsSecret: "get" on secrets team-a/creds`,
			`spec.server.external.host: "create" on tunnelbenchmarks.bench.tunnelbench.io in namespace victim`,
			`spec.network: "create" on networkchaos.chaos-mesh.org in namespace victim`}},
		{"a transport's own chaos-mesh link", bench(external("kube-dns.kube-system.svc.cluster.local"),
			benchv1.TransportSpec{Name: "wan", Type: benchv1.TransportDirect, Network: chaosLink}), []string{
			`spec.server.external.credentialsSecret: "get" on secrets team-a/creds`,
			`spec.server.external.host: "create" on tunnelbenchmarks.bench.tunnelbench.io in namespace kube-system`,
			`spec.transports[0].network: "create" on networkchaos.chaos-mesh.org in namespace kube-system`}},
		{"another namespace's server, in every spelling of its Service", bench(external("pg.victim")), []string{
			`spec.server.external.credentialsSecret: "get" on secrets team-a/creds`,
			`spec.server.external.host: "create" on tunnelbenchmarks.bench.tunnelbench.io in namespace victim`}},
		{"the namespace's own Service needs nothing more", bench(external("pg.team-a.svc.cluster.local")), []string{
			`spec.server.external.credentialsSecret: "get" on secrets team-a/creds`}},
		{"a chaos-mesh link within the namespace", withNetwork(bench(external("db.team-a.svc")), chaosLink),
			[]string{`spec.server.external.credentialsSecret: "get" on secrets team-a/creds`}},
		{"a userspace link shapes nothing of the far end", withNetwork(bench(external("db.victim.svc")), userspaceIt),
			[]string{`spec.server.external.credentialsSecret: "get" on secrets team-a/creds`,
				`spec.server.external.host: "create" on tunnelbenchmarks.bench.tunnelbench.io in namespace victim`}},
		{"a host outside the cluster", withNetwork(bench(external("10.1.2.3")), chaosLink),
			[]string{`spec.server.external.credentialsSecret: "get" on secrets team-a/creds`}},
		{"a shared pooler of a CloudNativePG server: a Pooler made for it", bench(cnpg, pooledAt(benchv1.PoolerService)),
			[]string{`spec.server.cnpg.clusterName: "get" on secrets team-a/pg-app`,
				`spec.transports[0].pooler.placement: "create" on poolers.postgresql.cnpg.io in namespace team-a`}},
		{"a sidecar pooler: nothing more", bench(cnpg, pooledAt(benchv1.PoolerSidecar)),
			[]string{`spec.server.cnpg.clusterName: "get" on secrets team-a/pg-app`}},
		{"direct via pod: the Service's EndpointSlices", bench(cnpg, benchv1.TransportSpec{Name: "d", Type: benchv1.TransportDirect},
			benchv1.TransportSpec{Name: "pod", Type: benchv1.TransportDirect, Direct: &benchv1.DirectTransport{Via: benchv1.ViaPod}}),
			[]string{`spec.server.cnpg.clusterName: "get" on secrets team-a/pg-app`,
				`spec.transports[1].direct.via: "list" on endpointslices.discovery.k8s.io in namespace team-a`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Required(tt.tb)
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, a := range got {
				lines = append(lines, a.Field.String()+": "+a.String())
				if a.Why == "" {
					t.Errorf("%s says not why", a)
				}
			}
			if !slices.Equal(lines, tt.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(lines, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// TestPolicyRunnerImages: the operator's own image and the listed ones (exact or by a prefix
// ending in *) pass; any other is refused naming spec.runner.image and the list.
func TestPolicyRunnerImages(t *testing.T) {
	p := Policy{DefaultRunnerImage: "tunnelbench:dev", RunnerImages: []string{"registry.corp/tb/runner:1.2", "registry.corp/tb-dev/*"}}
	tests := []struct {
		image string
		ok    bool
	}{
		{"", true},
		{"tunnelbench:dev", true},
		{"registry.corp/tb/runner:1.2", true},
		{"registry.corp/tb-dev/runner:pr-7", true},
		{"registry.corp/tb/runner:1.3", false},
		{"registry.corp/tb-devil/runner:1", false},
		{"evil.example/steal:latest", false},
	}
	for _, tt := range tests {
		tb := bench(cnpg)
		tb.Spec.Runner = &benchv1.RunnerSpec{Image: tt.image}
		errs := p.Refusals(tb)
		if (len(errs) == 0) != tt.ok {
			t.Errorf("image %q: refusals %v, want allowed=%v", tt.image, errs, tt.ok)
		}
		if len(errs) > 0 && (errs[0].Field != "spec.runner.image" || !strings.Contains(errs[0].Detail, "registry.corp/tb-dev/*")) {
			t.Errorf("refusal of %q names neither the field nor the list: %v", tt.image, errs[0])
		}
	}
	if errs := (Policy{DefaultRunnerImage: "x"}).Refusals(&benchv1.TunnelBenchmark{Spec: benchv1.TunnelBenchmarkSpec{
		Runner: &benchv1.RunnerSpec{Image: "y"}}}); len(errs) != 1 || !strings.Contains(errs[0].Detail, "is empty") {
		t.Errorf("an empty list is not said: %v", errs)
	}
}

// TestPolicyPrivilegedTransports: an openvpn transport is refused, naming its field and the
// chart value, unless the administrator allowed privileged transports; WireGuard always passes.
func TestPolicyPrivilegedTransports(t *testing.T) {
	tb := bench(cnpg)
	tb.Spec.Transports = []benchv1.TransportSpec{{Name: "wg", Type: benchv1.TransportVPN},
		{Name: "ovpn", Type: benchv1.TransportVPN, VPN: &benchv1.VPNTransport{Kind: benchv1.VPNOpenVPN}}}
	errs := Policy{}.Refusals(tb)
	if len(errs) != 1 || errs[0].Field != "spec.transports[1].vpn.kind" ||
		!strings.Contains(errs[0].Detail, "transports.allowPrivileged") || !strings.Contains(errs[0].Detail, "NET_ADMIN") {
		t.Errorf("refusals %v, want one naming spec.transports[1].vpn.kind, the privilege and the chart value", errs)
	}
	if errs := (Policy{AllowPrivileged: true}).Refusals(tb); len(errs) != 0 {
		t.Errorf("allowed, yet refused: %v", errs)
	}
}

// TestPolicyWithoutTheWebhook: with no webhook to check the creator, what reaches beyond the
// benchmark's namespace (another namespace's server, a chaos-mesh link shaping it, a
// ClusterIssuer) is refused naming its field and the chart value; what stays in the namespace
// passes. With the webhook, the policy leaves all of it to the creator's SubjectAccessReviews.
func TestPolicyWithoutTheWebhook(t *testing.T) {
	withClusterIssuer := bench(external("db.team-a.svc"), tlsRequire)
	withClusterIssuer.Spec.TLS = &benchv1.BenchmarkTLS{IssuerRef: benchv1.IssuerReference{Name: "corp-ca", Kind: "ClusterIssuer"}}
	chaosIntoVictim := bench(external("db.victim.svc"))
	chaosIntoVictim.Spec.Network = chaosLink
	tests := []struct {
		name string
		tb   *benchv1.TunnelBenchmark
		want []string
	}{
		{"its own namespace's server, Secrets and managed cluster", bench(external("db.team-a.svc"), verifyFull, clientCert), nil},
		{"a server outside the cluster", bench(external("db.example.com")), nil},
		{"a CloudNativePG server with its pooler", bench(cnpg, pooledAt(benchv1.PoolerService)), nil},
		{"another namespace's server", bench(external("pg.victim")),
			[]string{`spec.server.external.host: Forbidden: it needs "create" on tunnelbenchmarks.bench.tunnelbench.io in namespace victim`}},
		{"a chaos-mesh link into another namespace", chaosIntoVictim, []string{
			`spec.server.external.host: Forbidden: it needs "create" on tunnelbenchmarks.bench.tunnelbench.io in namespace victim`,
			`spec.network: Forbidden: it needs "create" on networkchaos.chaos-mesh.org in namespace victim`}},
		{"a ClusterIssuer", withClusterIssuer,
			[]string{`spec.tls.issuerRef: Forbidden: it needs "use" on clusterissuers.cert-manager.io corp-ca`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range (Policy{CreatorUnchecked: true}).Refusals(tc.tb) {
				if !strings.Contains(e.Detail, "webhook.enabled") {
					t.Errorf("%s does not name the chart value", e)
				}
				got = append(got, e.Error())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("refusals %q, want %q", got, tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("refusal %q, want it to begin %q", got[i], tc.want[i])
				}
			}
			if errs := (Policy{}).Refusals(tc.tb); len(errs) != 0 {
				t.Errorf("with the webhook, the policy refuses %v", errs)
			}
		})
	}
}
