package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

func init() {
	register(command{name: "with-file", run: func(args []string, _ io.Reader, _, stderr io.Writer) int {
		return execWithFile(args, stderr)
	}})
}

// execWithFile writes a configuration file from an environment variable, then replaces this
// process with the command after "--", which so receives the pod's signals directly: how a peer's
// program that reads its settings from a file (HAProxy) is configured from its pod spec, with no
// code of its own here. The settings are no secret (they sit in the pod spec).
func execWithFile(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("with-file", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("path", "", "the file to write (its folder is made)")
	from := fs.String("from-env", "", "the environment variable holding its content")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	command := fs.Args()
	content, ok := os.LookupEnv(*from)
	if *path == "" || !ok || len(command) == 0 {
		fmt.Fprintln(stderr, "tunnelbench-runner with-file: usage: with-file --path=FILE --from-env=VAR -- COMMAND [ARGS]")
		return 2
	}
	if err := os.MkdirAll(filepath.Dir(*path), 0o700); err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner with-file: %v\n", err)
		return 1
	}
	if err := os.WriteFile(*path, []byte(content), 0o600); err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner with-file: %v\n", err)
		return 1
	}
	bin, err := exec.LookPath(command[0])
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner with-file: %v\n", err)
		return 1
	}
	var env []string
	for _, e := range os.Environ() {
		if len(e) <= len(*from) || e[:len(*from)+1] != *from+"=" {
			env = append(env, e)
		}
	}
	err = syscall.Exec(bin, command, env)
	fmt.Fprintf(stderr, "tunnelbench-runner with-file: cannot start %s: %v\n", bin, err)
	return 1
}
