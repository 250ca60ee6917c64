// Package forward carries TCP connections from a listener to one destination, both ways, passing
// each side's end of stream on: the gateways' forwarding to the server (the WireGuard and OpenVPN
// ends next to it) and the WireGuard client's loopback listener.
package forward

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// TargetDialer dials the server at the address its name resolved to, resolved once and kept: a
// DNS lookup for every forwarded connection would make each one depend on the cluster's DNS
// answering, and add its time to the connection's. A dial that fails resolves the name again,
// once, for a server whose address moved.
type TargetDialer struct {
	// Target is the server, host:port.
	Target string
	mu     sync.Mutex
	addr   string
	d      net.Dialer
}

// Dial connects to the target.
func (t *TargetDialer) Dial(ctx context.Context) (net.Conn, error) {
	addr, err := t.resolved(ctx, false)
	if err != nil {
		return nil, err
	}
	c, err := t.d.DialContext(ctx, "tcp", addr)
	if err == nil {
		return c, nil
	}
	if addr, err = t.resolved(ctx, true); err != nil {
		return nil, err
	}
	return t.d.DialContext(ctx, "tcp", addr)
}

// resolved is the target's host:port with the host's first address, looked up when not known
// yet or when again is set.
func (t *TargetDialer) resolved(ctx context.Context, again bool) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.addr != "" && !again {
		return t.addr, nil
	}
	host, port, err := net.SplitHostPort(t.Target)
	if err != nil {
		return "", err
	}
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return "", err
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("%s has no address", host)
	}
	t.addr = net.JoinHostPort(addrs[0], port)
	return t.addr, nil
}

// dialTimeout bounds one forwarded connection's dial: libpq's own connect_timeout is longer.
const dialTimeout = 10 * time.Second

// Serve accepts on ln until ctx ends and pipes every connection to one dial makes; it returns once
// every connection has ended, which ctx's end forces.
func Serve(ctx context.Context, ln net.Listener, dial func(context.Context) (net.Conn, error), logf func(string, ...any)) error {
	go func() { <-ctx.Done(); _ = ln.Close() }()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			dctx, cancel := context.WithTimeout(ctx, dialTimeout)
			defer cancel()
			up, err := dial(dctx)
			if err != nil {
				logf("cannot forward a connection from %s: %v", c.RemoteAddr(), err)
				_ = c.Close()
				return
			}
			// When ctx ends (the pod stops the forwarder), the connections it carries end too: one
			// whose far end died silently (a gateway killed) would otherwise hold the process
			// until the kubelet kills it at the end of its grace period.
			stop := context.AfterFunc(ctx, func() { _ = c.Close(); _ = up.Close() })
			defer stop()
			pipe(c, up)
		}()
	}
}

// halfCloser is a connection whose sending side closes alone.
type halfCloser interface{ CloseWrite() error }

// pipe copies both ways until both sides are done, passing each side's end of stream on.
func pipe(a, b net.Conn) {
	var wg sync.WaitGroup
	one := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if hc, ok := dst.(halfCloser); ok {
			_ = hc.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}
	wg.Add(2)
	go one(a, b)
	go one(b, a)
	wg.Wait()
	_ = a.Close()
	_ = b.Close()
}
