package netdev

import "testing"

// BenchmarkRead is one read of this machine's interface counters, as the runner reads its pod's at
// each end of the window.
func BenchmarkRead(b *testing.B) {
	for b.Loop() {
		if _, err := Read(Path); err != nil {
			b.Skip(err)
		}
	}
}
