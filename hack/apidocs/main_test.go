package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The real API package and its committed reference, from this package's directory.
const (
	apiDir       = "../../api/v1alpha1"
	referenceDir = "../../docs/reference"
)

// widgetPackage wraps a test's types in an API package whose one kind, Widget, has a WidgetSpec: each
// case declares WidgetSpec and whatever it uses.
const widgetPackage = `// +groupName=example.io
package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget is the test's kind.
// +kubebuilder:object:root=true
type Widget struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec WidgetSpec ` + "`json:\"spec\"`" + `
}
`

func renderWidget(t *testing.T, types string) string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "widget.go", widgetPackage+types, parser.ParseComments)
	if err != nil {
		t.Fatalf("parsing the test package: %v", err)
	}
	pkg, err := newAPIPackage([]*ast.File{file})
	if err != nil {
		t.Fatalf("newAPIPackage: %v", err)
	}
	return pkg.renderKindPage("Widget")
}

// sectionOf is a type's section of a page, from its heading to the next one.
func sectionOf(page, typeName string) string {
	_, section, found := strings.Cut(page, "\n## "+typeName+"\n")
	if !found {
		return ""
	}
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}

// rowOf is the table row of a field in a type's section.
func rowOf(page, typeName, field string) string {
	for line := range strings.SplitSeq(sectionOf(page, typeName), "\n") {
		if strings.HasPrefix(line, "| `"+field+"` |") {
			return line
		}
	}
	return ""
}

func TestRenderKindPage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		types string
		// rows maps "Type.field" to the text its row must hold, "" for a row that must be absent.
		rows map[string][]string
		// once lists the types whose section must appear exactly once.
		once []string
		// absent is text that must not appear anywhere on the page.
		absent []string
	}{{
		name: "markers are stripped from descriptions and shown as validation",
		types: `
type WidgetSpec struct {
	// Size is how big the widget is.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=5
	// +optional
	Size int32 ` + "`json:\"size,omitempty\"`" + `
	// Name names it.
	// +kubebuilder:validation:MaxLength=30
	// +kubebuilder:validation:Pattern=` + "`^[a-z]+$`" + `
	Name string ` + "`json:\"name\"`" + `
}`,
		rows: map[string][]string{
			"WidgetSpec.size": {"| Size is how big the widget is. |", "min: 1<br>max: 5"},
			"WidgetSpec.name": {"| Name names it. |", "maxLength: 30<br>pattern: `^[a-z]+$`"},
		},
		absent: []string{"+kubebuilder", "+optional"},
	}, {
		name: "optional and required follow +optional, omitempty and +kubebuilder:validation:Required",
		types: `
type WidgetSpec struct {
	Plain string ` + "`json:\"plain\"`" + `
	// +optional
	Marked string ` + "`json:\"marked\"`" + `
	Omitted string ` + "`json:\"omitted,omitempty\"`" + `
	// +kubebuilder:validation:Required
	Forced string ` + "`json:\"forced,omitempty\"`" + `
}`,
		rows: map[string][]string{
			"WidgetSpec.plain":   {"| Yes |"},
			"WidgetSpec.marked":  {"| No |"},
			"WidgetSpec.omitted": {"| No |"},
			"WidgetSpec.forced":  {"| Yes |"},
		},
	}, {
		name: "defaults, enums and string enum values are shown",
		types: `
// Color is a widget's color.
// +kubebuilder:validation:Enum=red;blue
type Color string

const (
	// ColorRed is warm.
	ColorRed Color = "red"
	// ColorBlue is cold.
	ColorBlue Color = "blue"
)

type WidgetSpec struct {
	// Color defaults to red.
	// +kubebuilder:default=red
	// +optional
	Color Color ` + "`json:\"color,omitempty\"`" + `
	// Timeout bounds it.
	// +kubebuilder:default="30m"
	Timeout *metav1.Duration ` + "`json:\"timeout,omitempty\"`" + `
	// Mode is picked by the field.
	// +kubebuilder:validation:Enum=fast;slow
	Mode string ` + "`json:\"mode\"`" + `
}`,
		rows: map[string][]string{
			"WidgetSpec.color":   {"| [Color](#color) |", "default: `red`<br>enum: `red`, `blue`"},
			"WidgetSpec.timeout": {"| `metav1.Duration` |", "default: `30m`"},
			"WidgetSpec.mode":    {"enum: `fast`, `slow`"},
			"Color.red":          {"| ColorRed is warm. |"},
			"Color.blue":         {"| ColorBlue is cold. |"},
		},
	}, {
		name: "a nested struct is linked from every use and rendered once",
		types: `
type WidgetSpec struct {
	// Main is one part.
	Main Part ` + "`json:\"main\"`" + `
	// Spare is another.
	Spare *Part ` + "`json:\"spare,omitempty\"`" + `
	// All are every part.
	All []Part ` + "`json:\"all\"`" + `
	// ByName are parts by name.
	ByName map[string]Part ` + "`json:\"byName\"`" + `
}

// Part is a piece of a widget.
type Part struct {
	// Weight in grams.
	Weight int32 ` + "`json:\"weight\"`" + `
}`,
		rows: map[string][]string{
			"WidgetSpec.main":   {"| [Part](#part) |"},
			"WidgetSpec.spare":  {"| [Part](#part) |"},
			"WidgetSpec.all":    {"| [[]Part](#part) |"},
			"WidgetSpec.byName": {"| [map[string]Part](#part) |"},
			"Part.weight":       {"| `int32` |", "| Weight in grams. |"},
		},
		once: []string{"Widget", "WidgetSpec", "Part"},
	}, {
		name: "a cycle of types is rendered once each, without looping",
		types: `
type WidgetSpec struct {
	Head *Node ` + "`json:\"head,omitempty\"`" + `
}

// Node is a list's element.
type Node struct {
	Next *Node ` + "`json:\"next,omitempty\"`" + `
	Back *Back ` + "`json:\"back,omitempty\"`" + `
}

// Back points back.
type Back struct {
	Spec *WidgetSpec ` + "`json:\"spec,omitempty\"`" + `
}`,
		rows: map[string][]string{
			"Node.next": {"| [Node](#node) |"},
			"Back.spec": {"| [WidgetSpec](#widgetspec) |"},
		},
		once: []string{"WidgetSpec", "Node", "Back"},
	}, {
		name: "pipes and angle brackets are escaped, code spans kept",
		types: `
type WidgetSpec struct {
	// Expr is a | b, as in ` + "`x | y`" + `, reached at <name>-rw.
	// +kubebuilder:validation:XValidation:rule="self == 'a' || self == 'b'",message="expr must be a | b"
	Expr string ` + "`json:\"expr\"`" + `
}`,
		rows: map[string][]string{
			"WidgetSpec.expr": {"| Expr is a \\| b, as in `x \\| y`, reached at &lt;name>-rw. |",
				"| rule: expr must be a \\| b |"},
		},
		absent: []string{"self == 'a'"},
	}, {
		name: "inline fields are flattened and type rules listed by message",
		types: `
// WidgetSpec has a base.
// +kubebuilder:validation:XValidation:rule="has(self.a)",message="a is needed"
type WidgetSpec struct {
	Base ` + "`json:\",inline\"`" + `
	// Own is the spec's own.
	Own string ` + "`json:\"own\"`" + `
	hidden string
	Skipped string ` + "`json:\"-\"`" + `
}

// Base is shared.
type Base struct {
	// A is the base's.
	A string ` + "`json:\"a\"`" + `
}`,
		rows: map[string][]string{
			"Widget.apiVersion": {"| `example.io/v1` |"},
			"Widget.kind":       {"| `Widget` |"},
			"Widget.metadata":   {"| `metav1.ObjectMeta` |"},
			"WidgetSpec.a":      {"| A is the base's. |"},
			"WidgetSpec.own":    {"| Own is the spec's own. |"},
			"WidgetSpec.hidden": nil,
		},
		absent: []string{"## Base", "Skipped", "has(self.a)"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			page := renderWidget(t, tc.types)
			for field, wants := range tc.rows {
				typeName, fieldName, _ := strings.Cut(field, ".")
				row := rowOf(page, typeName, fieldName)
				if wants == nil {
					if row != "" {
						t.Errorf("%s has a row, want none: %s", field, row)
					}
					continue
				}
				if row == "" {
					t.Errorf("%s has no row in:\n%s", field, page)
				}
				for _, want := range wants {
					if !strings.Contains(row, want) {
						t.Errorf("row of %s = %s, want it to hold %q", field, row, want)
					}
				}
			}
			for _, typeName := range tc.once {
				if n := strings.Count(page, "\n## "+typeName+"\n"); n != 1 {
					t.Errorf("%d sections of %s, want 1:\n%s", n, typeName, page)
				}
			}
			for _, text := range tc.absent {
				if strings.Contains(page, text) {
					t.Errorf("page holds %q:\n%s", text, page)
				}
			}
		})
	}
}

func TestRuleWithoutMessageShowsRule(t *testing.T) {
	page := renderWidget(t, `
// +kubebuilder:validation:XValidation:rule="self.a != 'b,c'"
type WidgetSpec struct{}`)
	if want := "- failed rule `self.a != 'b,c'`"; !strings.Contains(page, want) {
		t.Errorf("page lacks %q:\n%s", want, page)
	}
}

func TestGenerateRealAPI(t *testing.T) {
	pages, err := generate(apiDir)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	paths := make([]string, len(pages))
	for i, p := range pages {
		paths[i] = p.path
	}
	want := []string{"api.md", "api/scheduledtunnelbenchmark.md", "api/tunnelbenchmark.md"}
	if !slices.Equal(paths, want) {
		t.Fatalf("pages %v, want %v", paths, want)
	}
	benchmark := string(pages[2].content)
	row := rowOf(benchmark, "TunnelBenchmarkSpec", "transports")
	if !strings.Contains(row, "[[]TransportSpec](#transportspec)") {
		t.Errorf("TunnelBenchmarkSpec's transports row = %q, want a link to TransportSpec", row)
	}
	for _, field := range []string{"name", "type", "ssh", "pooler", "network"} {
		if rowOf(benchmark, "TransportSpec", field) == "" {
			t.Errorf("TransportSpec has no %s row", field)
		}
	}
	scheduled := string(pages[1].content)
	if rowOf(scheduled, "TunnelBenchmarkSpec", "transports") == "" {
		t.Error("the ScheduledTunnelBenchmark page lacks the template's spec.transports")
	}
	index := string(pages[0].content)
	for _, link := range []string{"(api/tunnelbenchmark.md)", "(api/scheduledtunnelbenchmark.md)"} {
		if !strings.Contains(index, link) {
			t.Errorf("index lacks a link %s", link)
		}
	}

	anchorLink := regexp.MustCompile(`\]\(#([a-z0-9]+)\)`)
	for _, p := range pages {
		content := string(p.content)
		if !strings.HasPrefix(content, generatedHeader+"\n") {
			t.Errorf("%s does not start with the generated header", p.path)
		}
		for _, marker := range []string{"+kubebuilder", "+optional", "+listType"} {
			if strings.Contains(content, marker) {
				t.Errorf("%s holds the marker %s", p.path, marker)
			}
		}
		for _, match := range anchorLink.FindAllStringSubmatch(content, -1) {
			if !strings.Contains(strings.ToLower(content), "\n## "+match[1]+"\n") {
				t.Errorf("%s links to #%s, which has no section", p.path, match[1])
			}
		}
	}

	again, err := generate(apiDir)
	if err != nil {
		t.Fatalf("generate again: %v", err)
	}
	samePage := func(a, b page) bool { return a.path == b.path && string(a.content) == string(b.content) }
	if !slices.EqualFunc(pages, again, samePage) {
		t.Error("two renders of the same package differ")
	}
}

// TestCommittedReferenceIsFresh fails when api/v1alpha1 changed without `make manifests`, as
// `make verify` does.
func TestCommittedReferenceIsFresh(t *testing.T) {
	pages, err := generate(apiDir)
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	const stale = "docs/reference is stale: run make manifests"
	var want []string
	for _, p := range pages {
		want = append(want, p.path)
		committed, err := os.ReadFile(filepath.Join(referenceDir, filepath.FromSlash(p.path)))
		if err != nil {
			t.Errorf("%s: %v", stale, err)
			continue
		}
		if string(committed) != string(p.content) {
			t.Errorf("%s: %s differs from a fresh render", stale, p.path)
		}
	}
	got := []string{"api.md"}
	entries, err := os.ReadDir(filepath.Join(referenceDir, "api"))
	if err != nil {
		t.Fatalf("%s: %v", stale, err)
	}
	for _, entry := range entries {
		got = append(got, "api/"+entry.Name())
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: pages %v, want %v", stale, got, want)
	}
}
