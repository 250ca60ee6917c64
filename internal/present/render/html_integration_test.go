package render

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/present/summary"
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
	for _, id := range []string{"rates", "latency", "series", "connect", "cost", "budget", "results", "paths"} {
		if !strings.Contains(dom, `id="`+id+`"`) {
			t.Errorf("the rendered page lacks section %s", id)
		}
	}
}

// TestSweepHTMLInChromium: a sweep's page renders its curves (docs/sweep.png, the image of the README
// and docs/studies/sweeps.md, is its screenshot).
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
	out, err := filepath.Abs(filepath.Join("..", "..", "..", ".cache", "test-output", "render"))
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
	runOn := func(file string, args ...string) (stdout, stderr string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		// A profile of its own, so that runs never share state; as root, Chromium needs --no-sandbox.
		args = append([]string{"--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
			"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, args...)
		cmd := exec.CommandContext(ctx, chromium, append(args, "file://"+file)...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, e.String())
		}
		return o.String(), e.String()
	}
	dom, logs := runOn(page, "--dump-dom")
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "CONSOLE") {
			t.Errorf("console message: %s", line)
		}
	}
	// The widths people read it at: a laptop's and a desktop's. At each, the page must fit without
	// a horizontal scroll and clip no label; a screenshot is left for people to look at.
	probe := filepath.Join(out, name+"-layout.html")
	withProbe := strings.Replace(b.String(), "</body>", layoutProbe+"</body>", 1)
	if err := os.WriteFile(probe, []byte(withProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1280, 1920} {
		probed, _ := runOn(probe, "--dump-dom", fmt.Sprintf("--window-size=%d,1000", width))
		for _, problem := range layoutProblems(t, probed) {
			t.Errorf("at %d px: %s", width, problem)
		}
		shot := filepath.Join(out, fmt.Sprintf("%s-%d.png", name, width))
		runOn(page, "--hide-scrollbars", fmt.Sprintf("--window-size=%d,1500", width), "--screenshot="+shot)
		if st, err := os.Stat(shot); err != nil || st.Size() < 10_000 {
			t.Errorf("no screenshot of the page at %d px: %v", width, err)
		}
		t.Logf("the page and its screenshot at %d px: %s, %s", width, page, shot)
	}
	return dom
}

// layoutProbe is a script added to a copy of the page: it writes what does not fit into
// <pre id="layout-problems">, one problem a line — the page wider than the window, a section
// that scrolls sideways, an SVG text that reaches beyond its chart.
const layoutProbe = `<script>
(function () {
  var problems = [], root = document.documentElement, width = root.clientWidth;
  if (root.scrollWidth > width + 1) {
    problems.push("the page is " + root.scrollWidth + " px wide in a " + width + " px window");
  }
  document.querySelectorAll("section").forEach(function (s) {
    if (s.scrollWidth > s.clientWidth + 1) {
      problems.push("section " + s.id + " scrolls sideways: " + s.scrollWidth + " > " + s.clientWidth + " px");
    }
  });
  document.querySelectorAll("svg").forEach(function (svg) {
    var box = svg.getBoundingClientRect(), where = (svg.closest("section") || {}).id;
    svg.querySelectorAll("text").forEach(function (t) {
      var r = t.getBoundingClientRect();
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) {
        problems.push("label clipped in " + where + ": " + JSON.stringify(t.textContent));
      }
    });
  });
  var out = document.createElement("pre");
  out.id = "layout-problems";
  out.textContent = problems.join("\n");
  document.body.appendChild(out);
})();
</script>`

// layoutProblems reads the probe's findings from the dumped DOM.
func layoutProblems(t *testing.T, dom string) []string {
	t.Helper()
	_, rest, found := strings.Cut(dom, `<pre id="layout-problems">`)
	if !found {
		t.Fatal("the layout probe did not run: no <pre id=\"layout-problems\"> in the DOM")
	}
	text, _, _ := strings.Cut(rest, "</pre>")
	if text = strings.TrimSpace(html.UnescapeString(text)); text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}
