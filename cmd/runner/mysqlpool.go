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
	"syscall"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/mysqlpool"
)

func init() {
	register(command{name: "mysqlpool", run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		return runMySQLPool(args, stdout, stderr)
	}})
}

// runMySQLPool serves TunnelBench's MySQL pooler until the kubelet stops its sidecar (SIGTERM),
// once the runner's container has ended. The password stays in this process: it is the pool's
// login on both sides.
func runMySQLPool(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mysqlpool", flag.ContinueOnError)
	fs.SetOutput(stderr)
	settings := mysqlpool.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	user, password := os.Getenv("PGUSER"), os.Getenv("PGPASSWORD")
	if user == "" || password == "" {
		fmt.Fprintln(stderr, "tunnelbench-runner mysqlpool: PGUSER and PGPASSWORD must be set (from the credentials Secret)")
		return 2
	}
	cfg, err := settings.Config(user, password)
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner mysqlpool: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	pool, listening, done, err := mysqlpool.Start(ctx, cfg, settings.Listen)
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner mysqlpool: %v\n", err)
		return 1
	}
	if settings.Stats != "" {
		sl, err := net.Listen("tcp", settings.Stats)
		if err != nil {
			fmt.Fprintf(stderr, "tunnelbench-runner mysqlpool: %v\n", err)
			return 1
		}
		srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: pool.StatsHandler()}
		go func() { _ = srv.Serve(sl) }()
	}
	fmt.Fprintf(stdout, "tunnelbench-runner mysqlpool: %s -> %s, %d server connections at most, server TLS %s\n",
		listening, settings.Server, settings.PoolSize, settings.ServerTLS)
	if err := <-done; err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner mysqlpool: %v\n", err)
		return 1
	}
	return 0
}
