package engine

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// RunError is a failed run with the load generator's own last meaningful error line.
type RunError struct {
	Err       error
	LastError string
}

func (e *RunError) Error() string {
	if e.LastError == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v: %s", e.Err, e.LastError)
}

func (e *RunError) Unwrap() error { return e.Err }

// ErrorLines keeps a generator's error lines as they come, to report the most specific one.
type ErrorLines struct {
	// Prefix starts an error line ("pgbench: error: ", sysbench's "FATAL: "); it is not kept.
	Prefix string
	// Continued joins tab-indented lines to the error line before them (libpq's second lines).
	Continued bool
	// Generic are the starts of lines that say less than another error beside them.
	Generic []string

	lines []string
	open  bool
}

// Observe reads one line of output.
func (e *ErrorLines) Observe(line string) {
	if msg, ok := strings.CutPrefix(line, e.Prefix); ok {
		e.lines = append(e.lines, msg)
		e.open = true
		return
	}
	if e.Continued && e.open && strings.HasPrefix(line, "\t") {
		e.lines[len(e.lines)-1] += " " + strings.TrimSpace(line)
		return
	}
	e.open = false
}

// Last returns the last specific error line, or the last line when all are generic, or "".
func (e *ErrorLines) Last() string {
	for i := len(e.lines) - 1; i >= 0; i-- {
		if !e.generic(e.lines[i]) {
			return e.lines[i]
		}
	}
	if len(e.lines) > 0 {
		return e.lines[len(e.lines)-1]
	}
	return ""
}

func (e *ErrorLines) generic(line string) bool {
	for _, g := range e.Generic {
		if strings.HasPrefix(line, g) {
			return true
		}
	}
	return false
}

// LastError reads a whole output with e's rules and returns its last specific error line.
func (e ErrorLines) LastError(output string) string {
	e.lines, e.open = nil, false
	for _, line := range strings.Split(output, "\n") {
		e.Observe(line)
	}
	return e.Last()
}

// ContainsAny reports whether message contains one of marks.
func ContainsAny(message string, marks []string) bool {
	for _, m := range marks {
		if strings.Contains(message, m) {
			return true
		}
	}
	return false
}

// ProgramVersion is what `program --version` prints, trimmed, for a result's provenance; empty
// when it cannot tell.
func ProgramVersion(ctx context.Context, program string) string {
	out, err := exec.CommandContext(ctx, program, "--version").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
