// Command testfailures reads `go test -json` on its input, prints the test output as `go test -v`
// would while it streams, and at the end prints again what each failed test said. A verbose test
// prints its failure where it happened, often thousands of lines before the end (the e2e's pod
// logs follow it); CI keeps only the output's last lines, where the names of the failed tests
// stand but not why they failed. hack/e2e.sh pipes its tests through it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// event is the part of test2json's event this command reads.
type event struct {
	Action string
	Test   string
	Output string
}

// maxLinesPerTest bounds what the summary repeats of one failed test: its last lines, where a
// t.Fatal ends and t.Errorf's usually stand.
const maxLinesPerTest = 30

// summary collects each test's own output, in the order of their first line, and which failed.
type summary struct {
	order  []string
	lines  map[string][]string
	failed map[string]bool
}

func newSummary() *summary {
	return &summary{lines: map[string][]string{}, failed: map[string]bool{}}
}

// add takes one event: output of a test is kept (the runner's "=== RUN" and "--- PASS" lines are
// not the test's words), a failure noted.
func (s *summary) add(e event) {
	if e.Test == "" {
		return
	}
	if e.Action == "fail" {
		s.failed[e.Test] = true
		return
	}
	line := strings.TrimRight(e.Output, "\n")
	if e.Action != "output" || line == "" || isFramework(line) {
		return
	}
	if _, seen := s.lines[e.Test]; !seen {
		s.order = append(s.order, e.Test)
	}
	s.lines[e.Test] = append(s.lines[e.Test], line)
}

// isFramework: a line the testing package writes about a test rather than the test itself.
func isFramework(line string) bool {
	trimmed := strings.TrimSpace(line)
	for _, prefix := range []string{"=== ", "--- PASS", "--- FAIL", "--- SKIP"} {
		if strings.HasPrefix(trimmed, prefix) {
			return true
		}
	}
	return false
}

// write prints, for each innermost failed test that said something, its last maxLinesPerTest lines.
func (s *summary) write(w io.Writer) {
	var failed []string
	for _, name := range s.order {
		if s.failed[name] && !s.failedWithin(name) {
			failed = append(failed, name)
		}
	}
	if len(failed) == 0 {
		return
	}
	fmt.Fprintf(w, "\nwhat the failed tests said (their last %d lines each):\n", maxLinesPerTest)
	for _, name := range failed {
		lines := s.lines[name]
		fmt.Fprintf(w, "--- %s:\n", name)
		if cut := len(lines) - maxLinesPerTest; cut > 0 {
			fmt.Fprintf(w, "    (%d lines before)\n", cut)
			lines = lines[cut:]
		}
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
}

// failedWithin: a subtest of name failed too. Its parent's own lines are then the lines around it
// (a TestEndToEnd's), not why it failed: the summary names the innermost failures.
func (s *summary) failedWithin(name string) bool {
	for other := range s.failed {
		if strings.HasPrefix(other, name+"/") {
			return true
		}
	}
	return false
}

// run copies the events' output to out as it comes (a line that is not an event, such as a build
// error, as it is) and writes the summary at the end.
func run(in io.Reader, out io.Writer) error {
	s := newSummary()
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for scanner.Scan() {
		var e event
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Fprintln(out, scanner.Text())
			continue
		}
		if _, err := io.WriteString(out, e.Output); err != nil {
			return err
		}
		s.add(e)
	}
	s.write(out)
	return scanner.Err()
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testfailures:", err)
		os.Exit(1)
	}
}
