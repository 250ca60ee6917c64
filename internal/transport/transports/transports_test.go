package transports

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/transport"
)

// TestEveryAPITypeIsRegistered: with this package linked, every type the API accepts has its
// transport, its rules and its peers' kinds (so that the reconciler finds and removes them).
func TestEveryAPITypeIsRegistered(t *testing.T) {
	// The API's own list: the Enum marker of TransportType.
	src, err := os.ReadFile("../../../api/v1alpha1/transport_types.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\+kubebuilder:validation:Enum=(\S+)\ntype TransportType string`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no Enum marker on TransportType")
	}
	var want []benchv1.TransportType
	for _, name := range strings.Split(string(m[1]), ";") {
		want = append(want, benchv1.TransportType(name))
	}
	slices.Sort(want)
	if got := transport.Types(); !slices.Equal(got, want) {
		t.Errorf("registered %v, want the API's %v: a transport's package is missing from this package's imports", got, want)
	}
	kinds := transport.PeerKinds()
	for _, k := range []string{"Deployment", "Service", "NetworkPolicy", "Pooler", "Certificate"} {
		if !slices.ContainsFunc(kinds, func(g schema.GroupVersionKind) bool { return g.Kind == k }) {
			t.Errorf("peer kinds %v lack %s: its objects would never be found to be removed", kinds, k)
		}
	}
}
