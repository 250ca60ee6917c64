package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/tunnelbench/tunnelbench/internal/transport/forward"
	"github.com/tunnelbench/tunnelbench/internal/transport/vpn/openvpn"
)

func init() {
	for _, gateway := range []bool{true, false} {
		name := map[bool]string{true: "ovpn-gateway", false: "ovpn-client"}[gateway]
		register(command{name: name, run: func(args []string, _ io.Reader, _, stderr io.Writer) int {
			return runOpenVPN(gateway, args, stderr)
		}})
	}
}

// runOpenVPN runs one end of the vpn transport's OpenVPN tunnel until the pod stops it or openvpn
// exits: the gateway (`ovpn-gateway`), which forwards what reaches its tunnel address to the
// server only, or the client (`ovpn-client`), whose TUN device carries the runner pod's
// connections to the gateway's tunnel address. Each serves its counters: the gateway's on its pod
// address once it forwards (its readiness), the client's on loopback for the runner.
func runOpenVPN(gateway bool, args []string, stderr io.Writer) int {
	name := "ovpn-client"
	if gateway {
		name = "ovpn-gateway"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var e openvpn.End
	e.Gateway = gateway
	fs.StringVar(&e.KeyDir, "key-dir", "", "folder with the CA's certificate and this end's certificate and key")
	fs.StringVar(&e.RunDir, "run-dir", "/tmp/openvpn", "folder for the configuration and the management socket")
	fs.StringVar(&e.GatewayName, "gateway-name", "", "the name in the gateway's certificate, pinned by the client")
	fs.StringVar(&e.Remote, "remote", "", "ovpn-client: the gateway's UDP address, host:port")
	target := fs.String("target", "", "ovpn-gateway: the server, host:port, the only destination")
	counters := fs.String("counters", "", "the address serving the tunnel's counters (the client's: loopback)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "tunnelbench-runner "+name+": "+format+"\n", a...) }
	if e.KeyDir == "" || e.GatewayName == "" || (gateway && *target == "") || (!gateway && e.Remote == "") {
		logf("--key-dir, --gateway-name and --target (gateway) or --remote (client) are needed")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	p, err := openvpn.Start(ctx, e, stderr)
	if err != nil {
		logf("%v", err)
		return 1
	}
	exited := make(chan error, 1)
	go func() { exited <- p.Wait() }()
	serve := func() { go serveCounters(ctx, *counters, func() (any, error) { return p.Counters() }, logf) }
	if !gateway {
		serve()
		return openVPNExit(ctx, <-exited, logf)
	}
	select {
	case <-p.Up():
	case err := <-exited:
		return openVPNExit(ctx, err, logf)
	}
	addr := net.JoinHostPort(openvpn.GatewayAddr.String(), strconv.Itoa(openvpn.ForwardPort))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		logf("cannot listen on the tunnel's address: %v", err)
		return 1
	}
	serve()
	logf("forwarding %s inside the tunnel to %s", addr, *target)
	d := &forward.TargetDialer{Target: *target}
	go func() { _ = forward.Serve(ctx, ln, d.Dial, logf) }()
	return openVPNExit(ctx, <-exited, logf)
}

// openVPNExit is the end's exit status once openvpn exited: 0 when the pod stopped it.
func openVPNExit(ctx context.Context, err error, logf func(string, ...any)) int {
	if ctx.Err() != nil {
		return 0
	}
	logf("openvpn exited: %v", err)
	return 1
}
