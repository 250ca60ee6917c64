package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// failingModule is a module whose test fails in one subtest after many lines of log, with a
// passing sibling: what the e2e looks like when one case fails.
const failingModule = `package x

import "testing"

func TestCases(t *testing.T) {
	t.Log("the parent speaks")
	t.Run("passes", func(t *testing.T) { t.Log("all well") })
	t.Run("fails", func(t *testing.T) {
		for i := 0; i < 100; i++ {
			t.Logf("noise %d", i)
		}
		t.Errorf("the limiter was %s", "nobody")
	})
}
`

// TestTheFailureIsRepeatedAtTheEnd runs the real go test -json on a failing module: the output
// streams as go test -v prints it, and its end repeats the failed subtest's last lines, its error
// among them, and nothing of the passing one or of the parent that failed because it did.
func TestTheFailureIsRepeatedAtTheEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	for name, text := range map[string]string{"go.mod": "module x\n\ngo 1.26\n", "x_test.go": failingModule} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-json", "-count=1", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "GOTOOLCHAIN=local")
	stream, err := cmd.Output()
	if err == nil {
		t.Fatal("the failing module's test passed")
	}
	var out bytes.Buffer
	if err := run(bytes.NewReader(stream), &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	head, tail, found := strings.Cut(text, "what the failed tests said")
	if !found {
		t.Fatalf("no summary:\n%s", text)
	}
	for _, want := range []string{"noise 0", "--- FAIL: TestCases/fails", "--- PASS: TestCases/passes"} {
		if !strings.Contains(head, want) {
			t.Errorf("the streamed output lacks %q:\n%s", want, head)
		}
	}
	for _, want := range []string{"--- TestCases/fails:", "the limiter was nobody", "noise 99", "(71 lines before)"} {
		if !strings.Contains(tail, want) {
			t.Errorf("the summary lacks %q:\n%s", want, tail)
		}
	}
	for _, unwanted := range []string{"all well", "noise 70\n", "=== RUN", "the parent speaks"} {
		if strings.Contains(tail, unwanted) {
			t.Errorf("the summary holds %q:\n%s", unwanted, tail)
		}
	}
}

func TestIsFramework(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{"=== RUN   TestX/a", true},
		{"    --- FAIL: TestX/a (0.00s)", true},
		{"--- PASS: TestX (1.00s)", true},
		{"    x_test.go:9: --- FAIL is what I print", false},
		{"    e2e_test.go:12: phase Failed", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.line), func(t *testing.T) {
			if got := isFramework(tt.line); got != tt.want {
				t.Errorf("isFramework(%q) = %v, want %v", tt.line, got, tt.want)
			}
		})
	}
}
