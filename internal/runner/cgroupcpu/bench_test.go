package cgroupcpu

import (
	"context"
	"net/http/httptest"
	"testing"
)

// BenchmarkRead is one sample of this process's own cgroup: what the runner reads of its
// container at each end of the window.
func BenchmarkRead(b *testing.B) {
	root, err := Self(b.TempDir())
	if err != nil {
		b.Skipf("no cgroup here: %v", err)
	}
	for b.Loop() {
		if _, err := Read(root); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFetch is one sample of a part over HTTP on loopback, as the runner asks a sidecar,
// both ends' CPU included.
func BenchmarkFetch(b *testing.B) {
	root, err := Self(b.TempDir())
	if err != nil {
		b.Skipf("no cgroup here: %v", err)
	}
	srv := httptest.NewServer(Handler(root))
	defer srv.Close()
	for b.Loop() {
		if _, err := Fetch(context.Background(), srv.URL); err != nil {
			b.Fatal(err)
		}
	}
}
