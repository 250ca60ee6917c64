package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWithFile runs `with-file` in a child process (it replaces the process with its command):
// the file holds the variable's content when the command starts, and the command no longer sees
// the variable.
func TestWithFile(t *testing.T) {
	if args := os.Getenv("TB_WITH_FILE_ARGS"); args != "" {
		os.Exit(run(strings.Split(args, "\x1f"), nil, os.Stdout, os.Stderr))
	}
	path := filepath.Join(t.TempDir(), "conf", "haproxy.cfg")
	const content = "frontend postgres\n  bind :5432\n"
	args := []string{"with-file", "--path=" + path, "--from-env=TB_CONFIG", "--", "sh", "-c", `cat "$0"; echo "[${TB_CONFIG:-unset}]"`, path}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWithFile$")
	cmd.Env = append(os.Environ(), "TB_WITH_FILE_ARGS="+strings.Join(args, "\x1f"), "TB_CONFIG="+content)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if got := out.String(); got != content+"[unset]\n" {
		t.Errorf("the command saw %q", got)
	}
	var stderr bytes.Buffer
	if code := run([]string{"with-file", "--path=" + path}, nil, &stderr, &stderr); code != 2 {
		t.Errorf("without a variable and a command: exit %d, %s", code, stderr.String())
	}
}
