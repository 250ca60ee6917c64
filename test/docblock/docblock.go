// Package docblock reads the shell blocks the documentation marks as tested, so that a test runs
// the commands a user reads, verbatim, rather than a copy of them that drifts.
//
// A tested block is a fenced code block preceded by a line `<!-- tested: NAME -->`.
package docblock

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// Marker is the line that marks the next fenced block as tested under name.
func Marker(name string) string { return "<!-- tested: " + name + " -->" }

// Read returns the body of the fenced block marked name in the Markdown file at path.
func Read(path, name string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return Find(data, name, path)
}

// Find returns the body of the fenced block marked name in data (from where, for errors).
func Find(data []byte, name, where string) (string, error) {
	if n := bytes.Count(data, []byte(Marker(name))); n > 1 {
		return "", fmt.Errorf("%s: %d blocks marked %q", where, n, name)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	marked, inBlock := false, false
	var body strings.Builder
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case inBlock && strings.HasPrefix(trimmed, "```"):
			return body.String(), nil
		case inBlock:
			body.WriteString(line + "\n")
		case trimmed == Marker(name):
			marked = true
		case marked && strings.HasPrefix(trimmed, "```"):
			inBlock, marked = true, false
		case marked && trimmed != "":
			return "", fmt.Errorf("%s: %q is not followed by a fenced block", where, Marker(name))
		}
	}
	if inBlock {
		return "", fmt.Errorf("%s: the block marked %q is not closed", where, name)
	}
	return "", fmt.Errorf("%s: no block marked %q", where, name)
}
