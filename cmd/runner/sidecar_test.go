package main

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/runner/cgroupcpu"
	"github.com/tunnelbench/tunnelbench/internal/testing/loopback"
)

// TestSidecarServesItsContainersCPU: the sidecar wrapper runs its command, serves the cgroup's
// accounting on its loopback port while the command runs, and exits with the command's status.
func TestSidecarServesItsContainersCPU(t *testing.T) {
	root, err := cgroupcpu.Self(t.TempDir())
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	port, err := loopback.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		done <- runSidecar([]string{"--cpu-port", fmt.Sprint(port), "--cgroup", root, "--", "sh", "-c", "sleep 2; exit 3"},
			io.Discard, io.Discard)
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d%s", port, runspec.CPUStatsPath)
	var s cgroupcpu.Sample
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if s, err = cgroupcpu.Fetch(context.Background(), url); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || s.Usage <= 0 || s.Version == 0 {
		t.Fatalf("sample %+v, %v", s, err)
	}
	select {
	case code := <-done:
		if code != 3 {
			t.Errorf("exit status %d, want the command's 3", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wrapper did not end with its command")
	}
}
