package chaosmesh

import "testing"

// TestServiceOf: the cluster DNS spellings of a Service, and hosts that are not one.
func TestServiceOf(t *testing.T) {
	tests := []struct {
		host, name, ns string
		ok             bool
	}{
		{"pg-rw", "pg-rw", "bench", true},
		{"pg-rw.db", "pg-rw", "db", true},
		{"pg-rw.db.svc", "pg-rw", "db", true},
		{"pg-rw.db.svc.cluster.local.", "pg-rw", "db", true},
		{"db.example.com", "", "", false},
		{"10.0.0.7", "", "", false},
	}
	for _, tt := range tests {
		name, ns, ok := ServiceOf(tt.host, "bench")
		if name != tt.name || ns != tt.ns || ok != tt.ok {
			t.Errorf("ServiceOf(%q) = %q %q %v", tt.host, name, ns, ok)
		}
	}
}
