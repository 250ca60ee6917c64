package architecture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// stopAnswers are the only functions of the benchmark reconciler that return controller-runtime's
// answer beside an error: Reconcile, which controller-runtime calls, and passResult, which turns a
// pass's stop into it.
var stopAnswers = map[string]bool{"Reconcile": true, "passResult": true}

// TestOneWayToStop: a step of the benchmark reconciler says it cannot go on by its error alone
// (controllers/benchmark/stop.go): no function returns a ctrl.Result beside an error but those
// two, none returns a flag beside one (done, ready, waits: `(…, bool, error)`), and none returns a
// *peerProblem, which is an error and travels as one. ensurePeer, whose readiness is what it
// observes (the chaos-mesh link goes on while its objects are injected), is the one observation
// with a flag.
func TestOneWayToStop(t *testing.T) {
	dir := filepath.Join(root, "controllers", "benchmark")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, problem := range stopProblems(fset, file) {
			t.Errorf("controllers/benchmark/%s%s", e.Name(), problem)
		}
	}
}

// stopProblems lists the functions of the file that stop a pass another way than by their error.
func stopProblems(fset *token.FileSet, file *ast.File) []string {
	var out []string
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Type.Results == nil {
			continue
		}
		var types []string
		for _, f := range fn.Type.Results.List {
			n := max(len(f.Names), 1)
			for range n {
				types = append(types, exprString(f.Type))
			}
		}
		if len(types) < 2 || types[len(types)-1] != "error" {
			continue
		}
		line := ":" + strconv.Itoa(fset.Position(fn.Pos()).Line) + ": " + fn.Name.Name + " returns (" + strings.Join(types, ", ") + ")"
		for _, typ := range types[:len(types)-1] {
			switch {
			case typ == "ctrl.Result" && !stopAnswers[fn.Name.Name]:
				out = append(out, line+": a pass's stop is nextPass(res), returned as the error")
			case typ == "bool" && fn.Name.Name != "ensurePeer" && fn.Name.Name != "createPeer":
				out = append(out, line+": a step that waits returns nextPass, not a flag beside its error")
			case typ == "*peerProblem":
				out = append(out, line+": a peer's problem is an error, returned as the error")
			}
		}
	}
	return out
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	}
	return "?"
}

// TestStopProblemsFindsEachKind: the rule above can fail, once for each other way to stop.
func TestStopProblemsFindsEachKind(t *testing.T) {
	tests := []struct {
		name, src string
		want      int
	}{
		{"a result beside the error", `func (r *R) step() (ctrl.Result, error) { return ctrl.Result{}, nil }`, 1},
		{"a done flag", `func (r *R) step() (res ctrl.Result, done bool, err error) { return }`, 2},
		{"a waits flag", `func (r *R) queue() (bool, error) { return false, nil }`, 1},
		{"a problem beside the error", `func (r *R) peers() (bool, *peerProblem, error) { return false, nil, nil }`, 2},
		{"the error alone", `func (r *R) step() error { return nil }`, 0},
		{"Reconcile", `func (r *R) Reconcile() (ctrl.Result, error) { return ctrl.Result{}, nil }`, 0},
		{"a value and its error", `func (r *R) observe() (observedStep, error) { return observedStep{}, nil }`, 0},
		{"a result, no error", `func (r *R) poll() ctrl.Result { return ctrl.Result{} }`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertProblems(t, tt.src, stopProblems, tt.want) })
	}
}
