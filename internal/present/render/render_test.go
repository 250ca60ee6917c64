package render

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/analysis/crossbench"
	"github.com/tunnelbench/tunnelbench/internal/present/summary"
)

var update = flag.Bool("update", false, "rewrite the golden files from the current output")

func fixture(t *testing.T) summary.Summary {
	t.Helper()
	return summary.Of(fixtureBenchmark(t))
}

// fixtureBenchmark is testdata/benchmark.yaml, a completed benchmark with its status.
func fixtureBenchmark(t *testing.T) *benchv1.TunnelBenchmark {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "benchmark.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tb := &benchv1.TunnelBenchmark{}
	if err := yaml.UnmarshalStrict(b, tb); err != nil {
		t.Fatal(err)
	}
	return tb
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/render -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./internal/render -update rewrites it):\n%s", name, got)
	}
}

func TestReportFormats(t *testing.T) {
	s := fixture(t)
	for _, format := range []string{"table", "markdown", "csv", "json"} {
		t.Run(format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Report(&b, s, format); err != nil {
				t.Fatal(err)
			}
			golden(t, "report."+format, b.Bytes())
		})
	}
	if err := Report(&bytes.Buffer{}, s, "yaml"); err == nil || !strings.Contains(err.Error(), "table, markdown, csv, json, html") {
		t.Errorf("an unknown format: %v", err)
	}
}

func TestCompareFormats(t *testing.T) {
	before := fixtureBenchmark(t)
	after := fixtureBenchmark(t)
	after.Name = "paths-after"
	// After the change tls lost a fifth, beyond its runs' spread; the whole machine lost 5 %.
	for i := range after.Status.Results {
		r := &after.Status.Results[i]
		for j := range r.Runs {
			r.Runs[j].TPS *= 0.95
			if r.Transport == "tls" {
				r.Runs[j].TPS *= 0.8
			}
		}
	}
	c, err := crossbench.Compare(before, after, crossbench.DefaultThreshold)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Regressions) != 1 || c.Regressions[0] != "tls" {
		t.Fatalf("regressions %v: %+v", c.Regressions, c.Changes)
	}
	for _, format := range []string{"table", "markdown", "json"} {
		t.Run(format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Compare(&b, c, format); err != nil {
				t.Fatal(err)
			}
			golden(t, "compare."+format, b.Bytes())
		})
	}
}

// TestHTMLIsSelfContained: one page with every transport and figure, and nothing it would fetch.
// Chromium renders it in the plugin's integration test.
func TestHTMLIsSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, fixture(t)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<svg", "direct", "tls", "ssh-wan", "20100", "17200", "TLSv1.3", "chacha20-poly1305@openssh.com",
		"measured 10.9ms 49.8Mbit/s", `id="series"`, `id="latency"`, `id="connect"`, `id="cost"`, `id="forest"`, "limiter: client 2/3",
		"direct, link: 12.0 µs per transaction", `id="budget"`, "direct, server: 0.0625 ms of the 0.2 ms round trip (median of 2 runs)",
		"direct: 0.065 ms in no measured part&#39;s threads"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, never := range []string{"http://", "https://", "<script", "<link", "@import", "url("} {
		if strings.Contains(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), never) {
			t.Errorf("the page would fetch something: %q", never)
		}
	}
}
