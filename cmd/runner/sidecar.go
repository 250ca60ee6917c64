package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/runner/cgroupcpu"
)

func init() {
	register(command{name: "sidecar", run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		return runSidecar(args, stdout, stderr)
	}})
}

// runSidecar runs a sidecar's command as its child and serves, on a loopback port (or, for a peer
// pod such as the SSH gateway, on the pod's address), the CPU accounting of the container they
// share (internal/runner/cgroupcpu), for the runner to sample at the ends of its measured window. Signals
// go to the child; its exit status is this process's.
func runSidecar(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sidecar", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("cpu-port", 0, "loopback port to serve the container's CPU accounting on")
	listen := fs.String("cpu-listen", "", "address to serve it on instead, for other pods (host:port, :port for every address)")
	root := fs.String("cgroup", cgroupcpu.Root, "where the container's cgroup is mounted")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	addr := *listen
	if addr == "" && *port >= 1 && *port <= 65535 {
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(*port))
	}
	if fs.NArg() == 0 || addr == "" {
		fmt.Fprintln(stderr, "usage: tunnelbench-runner sidecar --cpu-port PORT|--cpu-listen HOST:PORT -- COMMAND [ARGS...]")
		return 2
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner sidecar: %v\n", err)
		return 1
	}
	mux := http.NewServeMux()
	mux.Handle(runspec.CPUStatsPath, cgroupcpu.Handler(*root))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Shutdown(context.Background()) }()

	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...) //nolint:gosec // the operator's own sidecar command
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, stdout, stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner sidecar: %v\n", err)
		return 1
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for s := range signals {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	signal.Stop(signals)
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		if status, ok := exit.Sys().(syscall.WaitStatus); ok && status.Signaled() {
			return 128 + int(status.Signal())
		}
		return exit.ExitCode()
	case err != nil:
		fmt.Fprintf(stderr, "tunnelbench-runner sidecar: %v\n", err)
		return 1
	}
	return 0
}
