// Package docs_test checks the project's documentation as a reader meets it on GitHub: every
// relative link and image of README.md and docs/ leads to a file that exists, every #anchor to a
// heading of its page, and the README stays a front door of at most maxReadmeLines lines.
package docs_test

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's root, seen from this package's directory.
var root = filepath.Join("..", "..")

// maxReadmeLines bounds README.md: the details live in docs/.
const maxReadmeLines = 200

var (
	// inlineLink matches [text](target) and ![alt](target), with an optional title after the
	// target; the target may be written in angle brackets.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`)
	// definition matches a reference-style link definition: [label]: target.
	definition = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	// heading matches an ATX heading: 1–6 #, a space, the text, an optional closing sequence.
	heading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$`)
	// htmlAnchor matches <a id="..."> or <a name="...">, which GitHub also links to.
	htmlAnchor = regexp.MustCompile(`<a\s+(?:[^>]*\s)?(?:id|name)="([^"]+)"`)
	// fence matches the start of a fenced code block's opening or closing line.
	fence = regexp.MustCompile("^\\s*(`{3,}|~{3,})")
	// textLink is a link or image inside a heading: GitHub's anchor keeps only its text.
	textLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	// htmlTag is an HTML tag inside a heading, which the anchor drops.
	htmlTag = regexp.MustCompile(`<[^>]+>`)
)

// line is one line of a Markdown file outside its fenced code blocks.
type line struct {
	number int
	text   string
}

// page is a Markdown file as the checks read it.
type page struct {
	rel     string // path from the repository's root, slash-separated
	lines   []line // the lines outside fenced code blocks
	anchors map[string]bool
}

// TestLinks: every relative link and image target of README.md and docs/**/*.md exists, and every
// #anchor names a heading of its page (or an <a id> there).
func TestLinks(t *testing.T) {
	files := markdownFiles(t)
	pages := map[string]*page{}
	for _, rel := range files {
		p, err := readPage(rel)
		if err != nil {
			t.Fatal(err)
		}
		pages[rel] = p
	}
	for _, rel := range files {
		p := pages[rel]
		for _, l := range p.lines {
			for _, target := range linkTargets(l.text) {
				if problem := checkTarget(p, target, pages); problem != "" {
					t.Errorf("%s:%d: %s: %s", rel, l.number, target, problem)
				}
			}
		}
	}
}

// TestReadmeLength: the README is a front door, not the manual.
func TestReadmeLength(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := len(strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"))
	if n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move the details into docs/", n, maxReadmeLines)
	}
}

// TestAnchor: headings become the anchors GitHub gives them.
func TestAnchor(t *testing.T) {
	for _, tt := range []struct {
		heading, want string
	}{
		{"Install", "install"},
		{"Working on TunnelBench", "working-on-tunnelbench"},
		{"Cluster-wide rights", "cluster-wide-rights"},
		{"Reading the answer: `kubectl tunnelbench`", "reading-the-answer-kubectl-tunnelbench"},
		{"The vpn transport (OpenVPN): a privileged transport", "the-vpn-transport-openvpn-a-privileged-transport"},
		{"The server's CPU over direct and TLS, in `make demo`", "the-servers-cpu-over-direct-and-tls-in-make-demo"},
		{"A bulk copy across 50 Mbit/s", "a-bulk-copy-across-50-mbits"},
		{"Schedules, history and regressions", "schedules-history-and-regressions"},
		{"snake_case and kebab-case", "snake_case-and-kebab-case"},
		{"Two  spaces", "two--spaces"},
		{"A [linked](other.md#x) heading", "a-linked-heading"},
		{"Ünïcode letters stay", "ünïcode-letters-stay"},
		{"Sweeps: how a path behaves as load grows", "sweeps-how-a-path-behaves-as-load-grows"},
		{"100 benchmarks at once", "100-benchmarks-at-once"},
	} {
		if got := anchor(tt.heading); got != tt.want {
			t.Errorf("anchor(%q) = %q, want %q", tt.heading, got, tt.want)
		}
	}
}

// TestLinkTargets: what counts as a link, and what inline code hides.
func TestLinkTargets(t *testing.T) {
	for _, tt := range []struct {
		text string
		want []string
	}{
		{"see [Install](docs/install.md) and ![a picture](docs/sweep.png)", []string{"docs/install.md", "docs/sweep.png"}},
		{"[in page](#install)", []string{"#install"}},
		{`[titled](a.md "A title")`, []string{"a.md"}},
		{"[angle](<a b.md>)", []string{"a b.md"}},
		{"`[not a link](x.md)` but [one](y.md)", []string{"y.md"}},
		{"``code with ` and [x](z.md)``", nil},
		{"[ref]: docs/ref.md", []string{"docs/ref.md"}},
		{"no link [here] (x.md)", nil},
	} {
		got := linkTargets(tt.text)
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("linkTargets(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// markdownFiles is README.md and every .md file under docs/, relative to the root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// readPage reads a Markdown file: its lines outside fenced code blocks and its anchors.
func readPage(rel string) (*page, error) {
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	p := &page{rel: rel, anchors: map[string]bool{}}
	seen := map[string]int{}
	open := "" // the fence of the open code block, if any
	for i, text := range strings.Split(string(b), "\n") {
		if m := fence.FindStringSubmatch(text); m != nil {
			switch {
			case open == "":
				open = m[1]
				continue
			case m[1][0] == open[0] && len(m[1]) >= len(open) && strings.TrimSpace(text) == m[1]:
				open = ""
				continue
			}
		}
		if open != "" {
			continue
		}
		p.lines = append(p.lines, line{number: i + 1, text: text})
		if m := heading.FindStringSubmatch(text); m != nil {
			a := anchor(m[2])
			// GitHub numbers repeated anchors: x, x-1, x-2, ...
			if n := seen[a]; n > 0 {
				p.anchors[fmt.Sprintf("%s-%d", a, n)] = true
			} else {
				p.anchors[a] = true
			}
			seen[a]++
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(text, -1) {
			p.anchors[m[1]] = true
		}
	}
	return p, nil
}

// anchor is the fragment GitHub gives a heading: its text without inline links' targets and
// HTML tags, lower-cased, with every character but letters, digits, spaces, hyphens and
// underscores dropped, and each space made a hyphen.
func anchor(text string) string {
	text = textLink.ReplaceAllString(text, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// linkTargets is every link and image target of a line, inline code aside.
func linkTargets(text string) []string {
	var out []string
	if m := definition.FindStringSubmatch(text); m != nil {
		out = append(out, strings.Trim(m[1], "<>"))
	}
	for _, m := range inlineLink.FindAllStringSubmatch(withoutCode(text), -1) {
		out = append(out, strings.Trim(m[1], "<>"))
	}
	return out
}

// withoutCode removes inline code spans: a run of n backticks up to the next run of exactly n.
// A run with no closing run stays as it is.
func withoutCode(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		if text[i] != '`' {
			b.WriteByte(text[i])
			i++
			continue
		}
		n := 0
		for i+n < len(text) && text[i+n] == '`' {
			n++
		}
		run := text[i : i+n]
		end := -1
		for j := i + n; j < len(text); {
			if text[j] != '`' {
				j++
				continue
			}
			k := 0
			for j+k < len(text) && text[j+k] == '`' {
				k++
			}
			if k == n {
				end = j + k
				break
			}
			j += k
		}
		if end < 0 {
			b.WriteString(run)
			i += n
			continue
		}
		i = end
	}
	return b.String()
}

// checkTarget says what is wrong with a link target of page p, or "" when nothing is.
func checkTarget(p *page, target string, pages map[string]*page) string {
	lower := strings.ToLower(target)
	for _, scheme := range []string{"http://", "https://", "mailto:"} {
		if strings.HasPrefix(lower, scheme) {
			return ""
		}
	}
	if target == "" {
		return "empty link target"
	}
	path, fragment, _ := strings.Cut(target, "#")
	if path == "" {
		if !p.anchors[fragment] {
			return fmt.Sprintf("no heading of %s has the anchor #%s", p.rel, fragment)
		}
		return ""
	}
	unescaped, err := url.PathUnescape(path)
	if err != nil {
		return fmt.Sprintf("cannot read the path: %v", err)
	}
	var rel string
	if strings.HasPrefix(unescaped, "/") {
		// GitHub reads a leading slash as the repository's root.
		rel = filepath.Clean(strings.TrimPrefix(unescaped, "/"))
	} else {
		rel = filepath.Join(filepath.Dir(filepath.FromSlash(p.rel)), filepath.FromSlash(unescaped))
	}
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "leads out of the repository"
	}
	if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
		return fmt.Sprintf("%s does not exist", filepath.ToSlash(rel))
	}
	if fragment == "" || !strings.HasSuffix(strings.ToLower(rel), ".md") {
		return ""
	}
	other := pages[filepath.ToSlash(rel)]
	if other == nil {
		// A Markdown file outside README.md and docs/: read for its anchors only.
		if other, err = readPage(filepath.ToSlash(rel)); err != nil {
			return fmt.Sprintf("cannot read it: %v", err)
		}
		pages[filepath.ToSlash(rel)] = other
	}
	if !other.anchors[fragment] {
		return fmt.Sprintf("no heading of %s has the anchor #%s", other.rel, fragment)
	}
	return ""
}
