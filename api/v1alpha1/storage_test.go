package v1alpha1

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestManagedStorageProblem(t *testing.T) {
	size := func(s string) *resource.Quantity { q := resource.MustParse(s); return &q }
	tests := []struct {
		name       string
		storage    *resource.Quantity
		initialize bool
		scale      int32
		copySize   string
		want       string // "" when the volume must be accepted
	}{
		{"the default volume, scale 1", size("1Gi"), true, 1, "", ""},
		{"63 units fit in 1Gi", size("1Gi"), true, 63, "", ""},
		{"64 units fill 1Gi, leaving no room for WAL", size("1Gi"), true, 64, "", "cannot hold spec.load.scale 64"},
		{"scale 100 in 1Gi", size("1Gi"), true, 100, "", "1600Mi of data"},
		{"scale 100 in 2Gi", size("2Gi"), true, 100, "", ""},
		{"nothing initialized", size("1Gi"), false, 1000, "", ""},
		{"a copy as big as the volume", size("1Gi"), true, 1, "1Gi", "cannot hold spec.load.copy.size 1Gi"},
		{"a copy that fits", size("1Gi"), true, 1, "512Mi", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &TunnelBenchmark{Spec: TunnelBenchmarkSpec{
				Server: ServerSpec{Managed: &ManagedServer{StorageSize: tt.storage}},
				Load:   LoadSpec{Initialize: tt.initialize, Scale: tt.scale},
			}}
			if tt.copySize != "" {
				tb.Spec.Load.Copy = &CopyLoad{Size: resource.MustParse(tt.copySize)}
			}
			got := tb.ManagedStorageProblem()
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if got != "" && !strings.Contains(got, "raise storageSize") {
				t.Errorf("%q does not say what to do", got)
			}
		})
	}
}
