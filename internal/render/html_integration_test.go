package render

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/summary"
)

// TestHTMLInChromium opens the report in a real headless Chromium (Debian's, installed by
// hack/deps.sh): the page renders without a console message, its DOM holds every transport's name
// and figure, and a screenshot is left in .cache/test-output/ for people to look at.
func TestHTMLInChromium(t *testing.T) {
	s := fixture(t)
	dom := inChromium(t, "report", s)
	for _, tr := range s.Transports {
		if !strings.Contains(dom, ">"+tr.Name+"<") || !strings.Contains(dom, rate(tr.Median, tr.Runs)) {
			t.Errorf("the rendered page lacks %s or its figure %s", tr.Name, rate(tr.Median, tr.Runs))
		}
	}
	for _, id := range []string{"rates", "latency", "series", "connect", "cost", "results", "paths"} {
		if !strings.Contains(dom, `id="`+id+`"`) {
			t.Errorf("the rendered page lacks section %s", id)
		}
	}
}

// TestSweepHTMLInChromium: a sweep's page renders its curves (the README's image is its screenshot).
func TestSweepHTMLInChromium(t *testing.T) {
	s := sweepFixture()
	dom := inChromium(t, "sweep", s)
	for _, want := range []string{`id="curves"`, `id="curve-latency"`, "direct: knee at 4 clients", "<polyline"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
}

// inChromium writes s's page as .cache/test-output/render/NAME.html, has headless Chromium render
// it (failing the test on any console message) and screenshot it beside, and returns its DOM.
func inChromium(t *testing.T, name string, s summary.Summary) string {
	t.Helper()
	if testing.Short() {
		t.Skip("opens Chromium: `make test` runs it")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: hack/deps.sh installs it (make test runs it)")
	}
	out, err := filepath.Abs(filepath.Join("..", "..", ".cache", "test-output", "render"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(out, name+".html")
	var b bytes.Buffer
	if err := HTML(&b, s); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (stdout, stderr string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		// A profile of its own, so that runs never share state; as root, Chromium needs --no-sandbox.
		args = append([]string{"--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
			"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, args...)
		cmd := exec.CommandContext(ctx, chromium, append(args, "file://"+page)...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, e.String())
		}
		return o.String(), e.String()
	}
	dom, logs := run("--dump-dom")
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "CONSOLE") {
			t.Errorf("console message: %s", line)
		}
	}
	shot := filepath.Join(out, name+".png")
	run("--hide-scrollbars", "--window-size=1280,1500", "--screenshot="+shot)
	if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
		t.Errorf("no screenshot of the page: %v", err)
	}
	t.Logf("the page and its screenshot: %s, %s", page, shot)
	return dom
}
