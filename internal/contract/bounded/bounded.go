// Package bounded keeps every text the operator stores within the size its destination accepts. A
// condition's message holds at most 32,768 characters and an events.k8s.io Event's note 1,024
// bytes: one longer text (pgbench quotes a whole 40 kB value in an error) makes the API refuse the
// whole status write, and a benchmark whose status cannot be written never ends. Texts are cut here
// and nowhere else, keeping their beginning (what failed) and their end (pgbench's and libpq's last
// words usually say why), with the cut marked.
package bounded

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits, in bytes. A failure's message is stored in three conditions (Failed, Completed,
// Progressing), so a condition's is well under the API's 32,768; an Event's note must be under
// 1,024 bytes (events.k8s.io/v1 validation).
const (
	ConditionMessage = 4096
	EventNote        = 1000
	// Field is the bound of a short text the runner reports into status (versions, a command line,
	// a cipher name).
	Field = 1024
	// ReportMessage is the bound of a failure message in the runner's report: a condition's, so
	// that what the runner cut and what the operator stores read alike.
	ReportMessage = ConditionMessage
)

// Text returns s if it fits in limit bytes, else its beginning and its end joined by a marker that
// says how much was cut. The result is valid UTF-8 (invalid bytes become U+FFFD) and never longer
// than limit; a limit too small for the marker gets the beginning alone.
func Text(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= limit {
		return s
	}
	if limit <= 0 {
		return ""
	}
	// The marker's length depends on the count it prints: measure with the largest count possible.
	probe := marker(len(s))
	keep := limit - len(probe)
	if keep < 8 {
		return prefix(s, limit)
	}
	head := prefix(s, keep/2)
	tail := suffix(s, keep-len(head))
	return head + marker(len(s)-len(head)-len(tail)) + tail
}

func marker(cut int) string {
	return fmt.Sprintf(" […%d bytes cut…] ", cut)
}

// prefix is the longest beginning of s of at most n bytes that ends on a rune boundary.
func prefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// suffix is the longest end of s of at most n bytes that starts on a rune boundary.
func suffix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
