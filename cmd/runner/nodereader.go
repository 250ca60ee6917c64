package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/runner/cgroupcpu"
)

func init() {
	register(command{name: "node-reader", run: func(args []string, _ io.Reader, _, stderr io.Writer) int {
		return runNodeReader(args, stderr)
	}})
}

// procRoot is proc when the node's /proc is mounted there, else "" (a chart without the mount: the
// pods' threads are then not read, and the runner says their time is not known).
func procRoot(proc string, stderr io.Writer) string {
	if proc == "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join(proc, "1", "schedstat")); err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner node-reader: the pods' threads will not be read: %v\n", err)
		return ""
	}
	return proc
}

// runNodeReader serves the CPU accounting of the pods of its node, by pod UID, from the node's
// cgroup hierarchy mounted read-only at --cgroup: the chart's node reader (a DaemonSet), which
// lets a benchmark's runner sample the server's pod at the ends of its measured window as it
// samples its own sidecars. It reads counters only, and needs no API access.
func runNodeReader(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("node-reader", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", fmt.Sprintf(":%d", runspec.NodeReaderPort), "address to serve on")
	root := fs.String("cgroup", "/host/sys/fs/cgroup", "where the node's cgroup hierarchy is mounted")
	proc := fs.String("proc", "/host/proc", "where the node's /proc is mounted (read-only), for the pods' threads; \"\" for none")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner node-reader: %v\n", err)
		return 1
	}
	mux := http.NewServeMux()
	mux.Handle(runspec.CPUStatsPath, cgroupcpu.PodHandler(*root, procRoot(*proc, stderr)))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		fmt.Fprintf(stderr, "tunnelbench-runner node-reader: %v\n", err)
		return 1
	}
	return 0
}
