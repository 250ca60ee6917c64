package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/transport/vpn/wgtunnel"
	"github.com/tunnelbench/tunnelbench/internal/transport/vpn/wgtunnel/userspace"
)

func init() {
	for _, gateway := range []bool{true, false} {
		name := map[bool]string{true: "wg-gateway", false: "wg-client"}[gateway]
		register(command{name: name, run: func(args []string, _ io.Reader, _, stderr io.Writer) int {
			return runWireGuard(gateway, args, stderr)
		}})
	}
}

// runWireGuard runs one end of the vpn transport's WireGuard tunnel in user space until the pod
// stops it: the gateway (`wg-gateway`), which forwards what comes through the tunnel to the
// server only, or the client (`wg-client`), which carries the runner pod's loopback connections
// into the tunnel and serves its counters on loopback for the runner.
func runWireGuard(gateway bool, args []string, stderr io.Writer) int {
	name := "wg-client"
	if gateway {
		name = "wg-gateway"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	keyDir := fs.String("key-dir", "", "folder with this end's private key and the peer's public key")
	target := fs.String("target", "", "wg-gateway: the server, host:port, the only destination")
	endpoint := fs.String("endpoint", "", "wg-client: the gateway's UDP address, host:port")
	listen := fs.String("listen", "", "wg-client: the loopback address pgbench connects to")
	counters := fs.String("counters", "", "the address serving the tunnel's counters (the client's: loopback)")
	verbose := fs.Bool("verbose", false, "log WireGuard's handshakes")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "tunnelbench-runner "+name+": "+format+"\n", a...) }
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	end, err := wireGuardEnd(ctx, gateway, *keyDir, *endpoint)
	if err != nil {
		logf("%v", err)
		return 2
	}
	end.Verbose = *verbose
	tn, err := end.Start()
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer tn.Close()
	if *counters != "" {
		go serveCounters(ctx, *counters, func() (any, error) { return tn.Counters() }, logf)
	}
	if gateway {
		logf("listening on UDP %d, forwarding %s:%d inside the tunnel to %s", wgtunnel.ListenPort, wgtunnel.GatewayAddr,
			wgtunnel.ForwardPort, *target)
		err = tn.ServeGateway(ctx, *target, logf)
	} else {
		logf("carrying %s through the tunnel to %s (gateway %s)", *listen, wgtunnel.GatewayAddr, end.Endpoint)
		err = tn.ServeClient(ctx, *listen, logf)
	}
	if err != nil {
		logf("%v", err)
		return 1
	}
	return 0
}

// resolveTimeout bounds the wait for the gateway's name: its Service exists before the runner pod.
const resolveTimeout = 30 * time.Second

// wireGuardEnd reads an end's keys and, for the client, resolves the gateway's address once:
// WireGuard's endpoint is an address, and the gateway's Service address does not change.
func wireGuardEnd(ctx context.Context, gateway bool, keyDir, endpoint string) (userspace.End, error) {
	own, peer := wgtunnel.ClientPrivateKey, wgtunnel.GatewayPublicKey
	end := userspace.End{Peer: netip.PrefixFrom(wgtunnel.GatewayAddr, 32), KeepAlive: 10 * time.Second}
	var err error
	if end.Addr, err = wgtunnel.ClientAddr(); err != nil {
		return end, err
	}
	if gateway {
		own, peer = wgtunnel.GatewayPrivateKey, wgtunnel.ClientPublicKey
		end = userspace.End{Addr: wgtunnel.GatewayAddr, Peer: wgtunnel.ClientPrefix, ListenPort: wgtunnel.ListenPort}
	}
	if end.PrivateKey, err = readKey(filepath.Join(keyDir, own)); err != nil {
		return end, err
	}
	if end.PeerKey, err = readKey(filepath.Join(keyDir, peer)); err != nil {
		return end, err
	}
	if gateway {
		return end, nil
	}
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return end, fmt.Errorf("--endpoint %q: %w", endpoint, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return end, fmt.Errorf("--endpoint %q: bad port", endpoint)
	}
	rctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(rctx, "ip", host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no address")
	}
	if err != nil {
		return end, fmt.Errorf("cannot resolve the gateway %s: %w", host, err)
	}
	end.Endpoint = netip.AddrPortFrom(addrs[0].Unmap(), uint16(p))
	return end, nil
}

func readKey(path string) (wgtunnel.Key, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return wgtunnel.Key{}, err
	}
	k, err := wgtunnel.ParseKey(string(b))
	if err != nil {
		return k, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// serveCounters serves what counters returns as JSON until ctx ends: a tunnel end's counters,
// which the runner reads at both ends of the load (runspec.Probe).
func serveCounters(ctx context.Context, addr string, counters func() (any, error), logf func(string, ...any)) {
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(
		func(w http.ResponseWriter, _ *http.Request) {
			c, err := counters()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(c)
		})}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logf("cannot serve the counters: %v", err)
	}
}
