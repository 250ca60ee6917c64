// Package architecture holds the project's layering rules as tests: what each binary may link,
// and where the words a user reads in a condition or an event are declared. A rule broken here is
// a design change, not a test to adjust: see docs/development/architecture.md.
package architecture

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/tunnelbench/tunnelbench"

// root is the module's directory, two levels above this package.
var root = filepath.Join("..", "..")

// deps lists every package a command links, its own included.
func deps(t *testing.T, cmd string) []string {
	t.Helper()
	c := exec.Command("go", "list", "-deps", "./"+cmd)
	c.Dir = root
	out, err := c.Output()
	if err != nil {
		t.Fatalf("go list -deps ./%s: %v", cmd, err)
	}
	return strings.Fields(string(out))
}

// TestBinariesLinkOnlyTheirLayer: the operator links nothing that runs in a pod's data path
// (WireGuard in user space drags in wireguard-go and gVisor's TCP/IP stack, megabytes the manager
// never runs), and the runner, which every benchmark pod runs, links neither the CRD types nor the
// controllers (it reads its run from internal/contract/runspec and reports through internal/contract/report, and
// names a failure's reason from api/conditions).
func TestBinariesLinkOnlyTheirLayer(t *testing.T) {
	internal := func(dir string) string { return module + "/internal/" + dir }
	tests := []struct {
		cmd       string
		forbidden []string
	}{
		{"cmd/manager", []string{"golang.zx2c4.com/wireguard", "gvisor.dev/gvisor", internal("transport/wgtunnel/userspace"),
			internal("runner"), internal("testing")}},
		{"cmd/runner", []string{module + "/api/v1alpha1", module + "/controllers", "sigs.k8s.io/controller-runtime",
			internal("operator"), internal("present"), internal("history"), internal("testing")}},
		{"cmd/kubectl-tunnelbench", []string{module + "/controllers", internal("operator"), internal("runner"),
			internal("transport"), internal("testing")}},
		// A reconciler each, none reaching into another's package.
		{"controllers/benchmark", []string{module + "/controllers/schedule", module + "/controllers/history"}},
		{"controllers/schedule", []string{module + "/controllers/benchmark", module + "/controllers/history"}},
		{"controllers/history", []string{module + "/controllers/benchmark", module + "/controllers/schedule"}},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			t.Parallel()
			for _, p := range deps(t, tt.cmd) {
				for _, f := range tt.forbidden {
					if p == f || strings.HasPrefix(p, f+"/") {
						t.Errorf("%s links %s (forbidden: %s)", tt.cmd, p, f)
					}
				}
			}
		})
	}
}

// reasonArgs names, for each function that writes a condition or an event, the positions of its
// arguments that are a condition type or a reason.
var reasonArgs = map[string][]int{
	"setCondition":         {1, 3}, // (tb, type, status, reason, message)
	"hasCondition":         {1, 3}, // (tb, type, status, reason)
	"warnOnce":             {1, 2}, // (tb, type, reason, message)
	"event":                {2},    // (tb, eventType, reason, action, note, args...)
	"Eventf":               {3},    // (object, related, eventType, reason, action, note, args...)
	"setScheduleCondition": {2, 4}, // (status, generation, type, status, reason, message)
}

// TestConditionsAndReasonsLiveInTheAPI: every condition type and reason a user reads is declared in
// api/conditions, once. A string constant named Condition… or Reason… anywhere else, or a string literal
// where a condition type or reason is written, is a word of the API that the API does not list.
func TestConditionsAndReasonsLiveInTheAPI(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch rel {
			case ".cache", ".git", "test", "hack", filepath.Join("api", "conditions"):
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, problem := range reasonProblems(fset, file) {
			t.Errorf("%s%s", rel, problem)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// reasonProblems lists what the file declares or writes as a condition type or reason outside
// api/conditions, each as ":line: what".
func reasonProblems(fset *token.FileSet, file *ast.File) []string {
	var out []string
	report := func(n ast.Node, format string, args ...any) {
		out = append(out, ":"+strconv.Itoa(fset.Position(n.Pos()).Line)+": "+fmt.Sprintf(format, args...))
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			for i, name := range n.Names {
				word := strings.HasPrefix(name.Name, "Condition") || strings.HasPrefix(name.Name, "Reason")
				if i < len(n.Values) && isStringLiteral(n.Values[i]) && name.IsExported() && word {
					report(name, "%s is declared outside api/conditions", name.Name)
				}
			}
		case *ast.CallExpr:
			for _, i := range reasonArgs[calleeName(n.Fun)] {
				if i < len(n.Args) && isStringLiteral(n.Args[i]) {
					report(n.Args[i], "%s's argument %d is the literal %s, not a constant of api/conditions", calleeName(n.Fun), i, literal(n.Args[i]))
				}
			}
		case *ast.CompositeLit:
			if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Condition" {
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok && isStringLiteral(kv.Value) {
						if key, ok := kv.Key.(*ast.Ident); ok && (key.Name == "Type" || key.Name == "Reason") {
							report(kv.Value, "a Condition's %s is the literal %s, not a constant of api/conditions", key.Name, literal(kv.Value))
						}
					}
				}
			}
		}
		return true
	})
	return out
}

func calleeName(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

func isStringLiteral(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	return ok && lit.Kind == token.STRING
}

func literal(e ast.Expr) string { return e.(*ast.BasicLit).Value }

// TestReasonProblemsFindsEachKind: the rule above can fail, once for each way a word escapes.
func TestReasonProblemsFindsEachKind(t *testing.T) {
	tests := []struct {
		name, src string
		want      int
	}{
		{"a constant of its own", `const ReasonMine = "Mine"`, 1},
		{"a condition type declared elsewhere", `const ConditionMine = "Mine"`, 1},
		{"a literal reason to setCondition", `func f() { r.setCondition(tb, conditions.Failed, s, "Mine", m) }`, 1},
		{"a literal type and reason to warnOnce", `func f() { r.warnOnce(tb, "Type", "Mine", m) }`, 2},
		{"a literal event reason", `func f() { r.event(tb, "Warning", "Mine", "Act", "%s", m) }`, 1},
		{"a literal in a Condition", `var c = metav1.Condition{Type: "T", Reason: conditions.ReasonWaiting}`, 1},
		{"constants of api/conditions", `func f() { r.setCondition(tb, conditions.Failed, s, conditions.ReasonTimeout, "a message") }`, 0},
		{"an unexported name", `const reasonText = "x"`, 0},
		{"a bound, not a word", `const ConditionMessage = 32768`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertProblems(t, tt.src, reasonProblems, tt.want) })
	}
}

// assertProblems checks that a rule finds want problems in src, a file of package x.
func assertProblems(t *testing.T, src string, rule func(*token.FileSet, *ast.File) []string, want int) {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "x.go", "package x\n"+src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := rule(fset, file); len(got) != want {
		t.Errorf("%d problems %q, want %d", len(got), got, want)
	}
}
