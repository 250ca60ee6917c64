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

	"github.com/tunnelbench/tunnelbench/internal/contract/runspec"
	"github.com/tunnelbench/tunnelbench/internal/transport/link"
)

func init() {
	register(command{name: "link", run: func(args []string, _ io.Reader, stdout, stderr io.Writer) int {
		return runLink(args, stdout, stderr)
	}})
}

// awaitUpstream bounds the wait for the far end before the link serves.
const awaitUpstream = time.Minute

// runLink serves the emulated link until the kubelet stops the sidecar (SIGTERM), once the
// runner's container has ended.
func runLink(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("link", flag.ContinueOnError)
	fs.SetOutput(stderr)
	get := runspec.BindLinkProxyFlags(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	p, err := get()
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner link: %v\n", err)
		return 2
	}
	// Bounded: when the far end stays closed, the run fails on it with the transport's own words.
	ctx, cancel := context.WithTimeout(context.Background(), awaitUpstream)
	waited, err := link.AwaitUpstream(ctx, p.Upstream, 200*time.Millisecond)
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner link: %v; serving anyway\n", err)
	} else if waited > time.Second {
		fmt.Fprintf(stdout, "tunnelbench-runner link: %s accepted connections after %s\n", p.Upstream, waited.Round(100*time.Millisecond))
	}
	proxy, err := link.Start(p.Listen, p.Upstream, link.Link{RTT: p.Link.RTT, Jitter: p.Link.Jitter, BitsPerSecond: p.Link.BitsPerSecond})
	if err != nil {
		fmt.Fprintf(stderr, "tunnelbench-runner link: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "tunnelbench-runner link: %s -> %s, rtt %s, jitter %s, %d bit/s (0: unlimited)\n",
		proxy.Addr(), p.Upstream, p.Link.RTT, p.Link.Jitter, p.Link.BitsPerSecond)
	if p.Stats != "" {
		if err := serveLinkStats(p.Stats, proxy); err != nil {
			fmt.Fprintf(stderr, "tunnelbench-runner link: %v\n", err)
			return 1
		}
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	<-stop
	proxy.Stop()
	return 0
}

// serveLinkStats serves the link's counters (runspec.LinkHeldText) on addr, a loopback address of the
// runner pod, for the runner to read at both ends of its load (runspec.LinkProbe).
func serveLinkStats(addr string, proxy *link.Proxy) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, runspec.LinkHeldText(proxy.Held()))
	})}
	go func() { _ = srv.Serve(ln) }()
	return nil
}
