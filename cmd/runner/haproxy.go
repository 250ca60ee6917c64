package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/tunnelbench/tunnelbench/internal/haproxy"
)

// execHAProxy writes the proxy transport's HAProxy configuration from flags, then replaces this
// process with HAProxy in the foreground, which so receives the pod's signals directly.
func execHAProxy(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("haproxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg haproxy.Config
	fs.StringVar(&cfg.Target, "target", "", "the server, host:port")
	fs.IntVar(&cfg.MaxConn, "max-conn", 0, "connections accepted at once (default 4096)")
	dir := fs.String("dir", "/tmp/haproxy", "folder for haproxy.cfg")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	text, err := cfg.Render()
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner haproxy: %v\n", err)
		return 2
	}
	path := filepath.Join(*dir, "haproxy.cfg")
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner haproxy: %v\n", err)
		return 1
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner haproxy: %v\n", err)
		return 1
	}
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		bin = "/usr/sbin/haproxy"
	}
	err = syscall.Exec(bin, []string{"haproxy", "-db", "-f", path}, os.Environ())
	fmt.Fprintf(stderr, "tunnelbench-runner haproxy: cannot start %s: %v\n", bin, err)
	return 1
}
