package specs_test

import (
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/operator/specs"
	"github.com/tunnelbench/tunnelbench/internal/transport/chaosmesh"
)

// TestEveryDerivedNameIsADNSLabel takes the longest names the CRD admits (metadata.name 63,
// a transport 30, 20 repetitions) and checks every name the operator, CloudNativePG, cert-manager
// and chaos-mesh derive from them: each is a Service name or a label value somewhere, so each must
// be a DNS label (63 characters), or it breaks at create time instead of at apply.
func TestEveryDerivedNameIsADNSLabel(t *testing.T) {
	dnsLabel := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	tb := &benchv1.TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("b", 63), Namespace: "ns"}}
	transport := strings.Repeat("t", 30)
	names := map[string]string{
		"init Job":          tb.JobName(benchv1.InitTransportLabel),
		"run Job, round 20": specs.JobName(tb, benchv1.RunRef{Transport: transport, Round: 20}),
		"runner account":    tb.RunnerAccountName(),
		"SSH gateway":       tb.GatewayName(),
		"pooler":            tb.PoolerName(transport),
		"pooler metrics":    tb.PoolerMetricsName(transport),
		"client cert":       tb.ClientCertificateName(transport),
		"managed cluster":   tb.ManagedClusterName(),
		"server cert":       specs.ManagedServerCertificateName(tb),
	}
	// CloudNativePG derives Services, Secrets, pods and Jobs from the Cluster's name; the longest
	// suffixes it adds (its Cluster names are limited to 50 for this reason).
	for _, suffix := range []string{"-rw", "-ro", "-r", "-app", "-ca", "-server", "-replication", "-1", "-1-initdb", "-pooler"} {
		names["CloudNativePG "+suffix] = tb.ManagedClusterName() + suffix
	}
	for _, suffix := range chaosmesh.Suffixes {
		names["NetworkChaos "+suffix] = chaosmesh.ObjectName(specs.JobName(tb, benchv1.RunRef{Transport: transport, Round: 20}), suffix)
	}
	seen := map[string]string{}
	for what, n := range names {
		if len(n) > 63 || !dnsLabel.MatchString(n) {
			t.Errorf("%s: %q (%d characters) is not a DNS label", what, n, len(n))
		}
		if other, dup := seen[n]; dup {
			t.Errorf("%s and %s are both %q", what, other, n)
		}
		seen[n] = what
	}
}

func TestBoundedNameKeepsShortNames(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"demo-pg-tunnelbench-server", "demo-pg-tunnelbench-server"},
		{strings.Repeat("a", 63), strings.Repeat("a", 63)},
	} {
		if got := benchv1.BoundedName(tt.in); got != tt.want {
			t.Errorf("BoundedName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	long := strings.Repeat("a", 70)
	if a, b := benchv1.BoundedName(long), benchv1.BoundedName(long+"b"); len(a) != 63 || a == b {
		t.Errorf("long names must be cut to 63 and stay apart: %q %q", a, b)
	}
}
