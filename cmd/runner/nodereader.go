package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
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

// runNodeReader serves the CPU accounting of the pods of its node, by pod UID, from the node's
// cgroup hierarchy mounted read-only at --cgroup: the chart's node reader (a DaemonSet), which
// lets a benchmark's runner sample the server's pod at the ends of its measured window as it
// samples its own sidecars. It reads counters only, and needs no API access.
func runNodeReader(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("node-reader", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", fmt.Sprintf(":%d", runspec.NodeReaderPort), "address to serve on")
	root := fs.String("cgroup", "/host/sys/fs/cgroup", "where the node's cgroup hierarchy is mounted")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner node-reader: %v\n", err)
		return 1
	}
	mux := http.NewServeMux()
	mux.Handle(runspec.CPUStatsPath, cgroupcpu.PodHandler(*root))
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
