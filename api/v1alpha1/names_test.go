package v1alpha1

import (
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDerivedNames(t *testing.T) {
	bench := func(name string) *TunnelBenchmark {
		return &TunnelBenchmark{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	dnsLabel := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	long := strings.Repeat("b", 63)
	tests := []struct {
		name string
		a, b string
	}{
		{"benchmark a with transport b-c, benchmark a-b with transport c: poolers",
			bench("a").PoolerName("b-c"), bench("a-b").PoolerName("c")},
		{"the same: Jobs", bench("a").JobName("b-c"), bench("a-b").JobName("c")},
		{"a transport named like the gateway", bench("a").JobName("ssh-gateway"), bench("a").GatewayName()},
		{"a Job and a pooler of one transport", bench("a").JobName("p"), bench("a").PoolerName("p")},
		{"a transport named like a pooler", bench("a").JobName("p-pooler"), bench("a").PoolerName("p")},
		{"a client certificate and a Job", bench("a").ClientCertificateName("t"), bench("a").JobName("t-client-cert")},
		{"long names that share their first 57 characters", bench(long).JobName("direct"), bench(long).JobName("direct-2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.a == tt.b {
				t.Errorf("both are %q", tt.a)
			}
			for _, n := range []string{tt.a, tt.b} {
				if len(n) > 63 || !dnsLabel.MatchString(n) {
					t.Errorf("%q is not a DNS label (a Service name and a label value)", n)
				}
			}
		})
	}
	if a, b := bench("demo").JobName("direct"), bench("demo").JobName("direct"); a != b || !strings.HasPrefix(a, "demo-direct-") {
		t.Errorf("Job names must be deterministic and readable: %q %q", a, b)
	}
}
