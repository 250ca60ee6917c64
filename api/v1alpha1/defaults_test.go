package v1alpha1

import (
	"fmt"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// TestDefaultsMatchTheSchema holds the Go defaults and the CRD's default markers to one value
// each: the generated schema is read back and compared, so that a default
// changed in one place only fails here instead of drifting.
func TestDefaultsMatchTheSchema(t *testing.T) {
	raw, err := os.ReadFile("../../config/crd/bases/bench.tunnelbench.io_tunnelbenchmarks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	spec := dig(t, crd, "spec", "versions", "0", "schema", "openAPIV3Schema", "properties", "spec", "properties")
	transport := dig(t, spec, "transports", "items", "properties")
	duration := func(d time.Duration) func(any) bool {
		return func(v any) bool { got, err := time.ParseDuration(fmt.Sprint(v)); return err == nil && got == d }
	}
	equal := func(want any) func(any) bool {
		return func(v any) bool { return fmt.Sprint(v) == fmt.Sprint(want) }
	}
	tests := []struct {
		path  []any
		in    any
		check func(any) bool
	}{
		{[]any{"timeout", "default"}, spec, duration(DefaultTimeout)},
		{[]any{"load", "properties", "clients", "default"}, spec, equal(DefaultClients)},
		{[]any{"load", "properties", "threads", "default"}, spec, equal(DefaultThreads)},
		{[]any{"load", "properties", "protocol", "default"}, spec, equal(DefaultProtocol)},
		{[]any{"load", "properties", "scale", "default"}, spec, equal(DefaultScale)},
		{[]any{"load", "properties", "progressInterval", "default"}, spec, duration(DefaultProgressInterval)},
		{[]any{"load", "properties", "repetitions", "default"}, spec, equal(DefaultRepetitions)},
		{[]any{"load", "properties", "order", "default"}, spec, equal(DefaultOrder)},
		{[]any{"load", "properties", "warmup", "default"}, spec, duration(DefaultWarmup)},
		{[]any{"server", "properties", "cnpg", "properties", "database", "default"}, spec, equal(DefaultDatabase)},
		// An external server's port has no schema default: the engine's own applies (EffectivePort).
		{[]any{"server", "properties", "engine", "default"}, spec, equal(EnginePostgreSQL)},
		{[]any{"server", "properties", "managed", "properties", "instances", "default"}, spec, equal(DefaultInstances)},
		{[]any{"server", "properties", "managed", "properties", "storageSize", "default"}, spec, equal(DefaultStorageSize)},
		{[]any{"tls", "properties", "issuerRef", "properties", "kind", "default"}, spec, equal(DefaultIssuerKind)},
		{[]any{"tls", "properties", "issuerRef", "properties", "group", "default"}, spec, equal(DefaultIssuerGroup)},
		{[]any{"pooler", "properties", "placement", "default"}, transport, equal(DefaultPoolerPlacement)},
		{[]any{"pooler", "properties", "poolMode", "default"}, transport, equal(DefaultPoolMode)},
		{[]any{"pooler", "properties", "poolSize", "default"}, transport, equal(DefaultPoolSize)},
		{[]any{"pooler", "properties", "maxClientConnections", "default"}, transport, equal(DefaultMaxClientConnections)},
		{[]any{"pooler", "properties", "clientTLS", "default"}, transport, equal(DefaultPoolerClientTLS)},
		{[]any{"ssh", "properties", "tunnels", "default"}, transport, equal(DefaultTunnels)},
		{[]any{"ssh", "properties", "sslMode", "default"}, transport, equal(DefaultSSHSSLMode)},
		{[]any{"tls", "properties", "sslMode", "default"}, transport, equal(DefaultTLSSSLMode)},
	}
	for _, tt := range tests {
		name := fmt.Sprint(tt.path[:len(tt.path)-1]...)
		t.Run(name, func(t *testing.T) {
			if v := dig(t, tt.in, tt.path...); !tt.check(v) {
				t.Errorf("the schema's default %v disagrees with the Go default", v)
			}
		})
	}
	// The rules that compare pool sizes with spec.load.clients are Go (internal/transport's
	// pooler rules), which read the defaults of an omitted pooler block from EffectivePooler.
	if serverTLS := dig(t, transport, "pooler", "properties", "serverTLS"); serverTLS.(map[string]any)["default"] != nil {
		t.Error("pooler.serverTLS must have no schema default: a CloudNativePG Pooler must not set it")
	}
}

// dig walks a decoded YAML document by map keys and list indexes ("0").
func dig(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch node := v.(type) {
		case map[string]any:
			v = node[fmt.Sprint(p)]
		case []any:
			var i int
			if _, err := fmt.Sscan(fmt.Sprint(p), &i); err != nil || i >= len(node) {
				t.Fatalf("no item %v in %v", p, path)
			}
			v = node[i]
		default:
			t.Fatalf("%v: %v is not a map or list", path, p)
		}
		if v == nil {
			t.Fatalf("%v: nothing at %v", path, p)
		}
	}
	return v
}

// TestEffectivePort: an external server's port, else its engine's.
func TestEffectivePort(t *testing.T) {
	tests := []struct {
		name   string
		server ServerSpec
		want   int32
	}{
		{"postgresql, no port", ServerSpec{External: &ExternalServer{Host: "db"}}, DefaultPort},
		{"mysql, no port", ServerSpec{Engine: EngineMySQL, External: &ExternalServer{Host: "db"}}, DefaultMySQLPort},
		{"mysql, its port", ServerSpec{Engine: EngineMySQL, External: &ExternalServer{Host: "db", Port: 3307}}, 3307},
		{"a CloudNativePG cluster", ServerSpec{CNPG: &CNPGServer{ClusterName: "pg"}}, DefaultPort},
	}
	for _, tt := range tests {
		if got := tt.server.EffectivePort(); got != tt.want {
			t.Errorf("%s: port %d, want %d", tt.name, got, tt.want)
		}
	}
}
