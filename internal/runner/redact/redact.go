// Package redact removes secret values from the texts the runner reports: its report (stored in a
// ConfigMap, then in status and events) and its output (the container's log). pgbench quotes what
// the server says, the server may quote a value a script selected, and an error may quote a
// connection setting; the runner never knows which line will hold a secret, so it replaces every
// known secret value in every line, in the spellings a message would quote it in.
package redact

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Mask replaces a secret.
const Mask = "[redacted]"

// minKeyLine is the shortest line of a key file that is redacted on its own: a PEM body's lines
// are 64 characters of base64, its header and footer are not secret.
const minKeyLine = 16

// Redactor replaces known secret values. The zero value redacts nothing.
type Redactor struct {
	replacer *strings.Replacer
	secrets  []string
}

// New redacts the given values (empty ones are ignored) in the spellings a message may quote them
// in: as they are, JSON- and Go-escaped, and with SQL's doubled single quotes.
func New(values ...string) *Redactor {
	seen := map[string]bool{}
	var secrets []string
	for _, v := range values {
		for _, form := range spellings(v) {
			if form != "" && !seen[form] {
				seen[form] = true
				secrets = append(secrets, form)
			}
		}
	}
	// strings.Replacer tries its old strings in argument order at each position: longest first,
	// so that a secret containing another is masked whole.
	sort.SliceStable(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s, Mask)
	}
	return &Redactor{replacer: strings.NewReplacer(pairs...), secrets: secrets}
}

func spellings(v string) []string {
	j, _ := json.Marshal(v)
	return []string{v, strings.Trim(string(j), `"`), strings.Trim(strconv.Quote(v), `"`), strings.ReplaceAll(v, "'", "''")}
}

// KeyMaterial is the secret content of a key file: the whole (trimmed) content and each line of it
// long enough to be part of the key's body (a single line of a PEM body is part of the key). A
// missing or unreadable file has nothing to redact.
func KeyMaterial(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	content := strings.TrimSpace(string(b))
	out := []string{content}
	for _, line := range strings.Split(content, "\n") {
		line = strings.TrimSpace(line)
		if len(line) >= minKeyLine && !strings.HasPrefix(line, "-----") {
			out = append(out, line)
		}
	}
	return out
}

// Empty reports whether the redactor knows no secret.
func (r *Redactor) Empty() bool { return r == nil || len(r.secrets) == 0 }

// String returns s with every known secret masked.
func (r *Redactor) String(s string) string {
	if r.Empty() {
		return s
	}
	return r.replacer.Replace(s)
}

// maxLine bounds what Writer holds while it waits for a line's end: a longer line is written in
// pieces, and a secret split across two pieces would not be seen.
const maxLine = 64 << 10

// Writer returns a writer that masks every known secret in each line before passing it to w. Close
// it (or Flush) to write a last line without a newline. Safe for concurrent use.
func (r *Redactor) Writer(w io.Writer) *LineWriter {
	return &LineWriter{r: r, w: w}
}

// LineWriter is Writer's writer.
type LineWriter struct {
	mu  sync.Mutex
	r   *Redactor
	w   io.Writer
	buf []byte
}

// Write buffers p and writes every complete line, masked.
func (l *LineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	end := bytes.LastIndexByte(l.buf, '\n') + 1
	if end == 0 && len(l.buf) >= maxLine {
		end = len(l.buf)
	}
	if end == 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(l.w, l.r.String(string(l.buf[:end]))); err != nil {
		return 0, err
	}
	l.buf = append(l.buf[:0], l.buf[end:]...)
	return len(p), nil
}

// Flush writes what is buffered, masked, even without a line's end.
func (l *LineWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(l.w, l.r.String(string(l.buf)))
	l.buf = l.buf[:0]
	return err
}

// Close flushes.
func (l *LineWriter) Close() error { return l.Flush() }
