// Command apidocs writes the API reference (docs/reference) from the Go types of api/v1alpha1, as
// CloudNativePG publishes theirs: an index, and one page per kind with a table per type. `make
// manifests` runs it; `make verify` and this package's tests fail when the committed pages are stale.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	apiDir := flag.String("api", "api/v1alpha1", "directory of the API's Go package")
	outDir := flag.String("out", "docs/reference", "directory to write api.md and api/<kind>.md into")
	flag.Parse()
	if err := run(*apiDir, *outDir); err != nil {
		fmt.Fprintln(os.Stderr, "apidocs:", err)
		os.Exit(1)
	}
}

func run(apiDir, outDir string) error {
	pages, err := generate(apiDir)
	if err != nil {
		return err
	}
	if err := removeStalePages(outDir, pages); err != nil {
		return err
	}
	for _, p := range pages {
		path := filepath.Join(outDir, filepath.FromSlash(p.path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("creating the directory of %s: %w", path, err)
		}
		if err := os.WriteFile(path, p.content, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// generate parses the API package in apiDir and renders its reference.
func generate(apiDir string) ([]page, error) {
	files, err := parsePackage(apiDir)
	if err != nil {
		return nil, err
	}
	pkg, err := newAPIPackage(files)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", apiDir, err)
	}
	return pkg.pages(), nil
}

// parsePackage parses the package's Go files other than tests, in file name order so that the pages do
// not depend on the order the file system lists them in.
func parsePackage(dir string) ([]*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing the API package: %w", err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, entry := range entries {
		name := entry.Name()
		if entry.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parsing the API package: %w", err)
		}
		files = append(files, file)
	}
	return files, nil
}

// removeStalePages deletes the kind pages this generator once wrote whose kind is gone, so that the
// output directory holds what the API declares and nothing else; a page without the generated header
// was written by hand and stays.
func removeStalePages(outDir string, pages []page) error {
	kindDir := filepath.Join(outDir, "api")
	entries, err := os.ReadDir(kindDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing the kind pages: %w", err)
	}
	for _, entry := range entries {
		path := "api/" + entry.Name()
		if entry.IsDir() || !strings.HasSuffix(path, ".md") ||
			slices.ContainsFunc(pages, func(p page) bool { return p.path == path }) {
			continue
		}
		content, err := os.ReadFile(filepath.Join(kindDir, entry.Name()))
		if err != nil {
			return fmt.Errorf("reading a kind page: %w", err)
		}
		if bytes.HasPrefix(content, []byte(generatedHeader)) {
			if err := os.Remove(filepath.Join(kindDir, entry.Name())); err != nil {
				return fmt.Errorf("removing a stale kind page: %w", err)
			}
		}
	}
	return nil
}
