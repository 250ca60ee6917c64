package forward

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestServeCarriesBothWaysAndEndOfStream: what the client sends reaches the target, the target's
// answer comes back, and the client's end of stream reaches the target (a forwarded libpq
// connection's Terminate is followed by its close).
func TestServeCarriesBothWaysAndEndOfStream(t *testing.T) {
	target, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = target.Close() }()
	got := make(chan string, 1)
	go func() {
		c, err := target.Accept()
		if err != nil {
			return
		}
		defer func() { _ = c.Close() }()
		b, _ := io.ReadAll(c) // until the client's end of stream arrives
		got <- string(b)
		_, _ = c.Write([]byte(strings.ToUpper(string(b))))
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	d := &TargetDialer{Target: target.Addr().String()}
	go func() { done <- Serve(ctx, ln, d.Dial, t.Logf) }()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	if s := <-got; s != "hello" {
		t.Errorf("the target read %q, want hello", s)
	}
	back, err := io.ReadAll(c)
	if err != nil || string(back) != "HELLO" {
		t.Errorf("the client read %q (%v), want HELLO", back, err)
	}
	_ = c.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve returned %v after its context ended, want nil", err)
	}
}

// TestTargetDialerRefusesATargetWithoutPort: a target that names no port is an error, before any
// lookup (no name is looked up here: tests reach nothing but loopback).
func TestTargetDialerRefusesATargetWithoutPort(t *testing.T) {
	for _, target := range []string{"missing-port", "127.0.0.1"} {
		d := &TargetDialer{Target: target}
		if c, err := d.Dial(context.Background()); err == nil {
			_ = c.Close()
			t.Errorf("Dial(%q) connected, want an error", target)
		}
	}
}

// TestServeEndsItsConnectionsWithItsContext: a connection whose target never answers does not
// hold Serve once its context ends.
func TestServeEndsItsConnectionsWithItsContext(t *testing.T) {
	target, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = target.Close() }()
	go func() {
		for {
			c, err := target.Accept()
			if err != nil {
				return
			}
			defer func() { _ = c.Close() }() // accepted, never answered
		}
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	d := &TargetDialer{Target: target.Addr().String()}
	go func() { done <- Serve(ctx, ln, d.Dial, t.Logf) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := c.Write([]byte("select 1")); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve returned %v, want nil", err)
	}
	// Ended: closed or reset (its unread request), not still open.
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var ne net.Error
	if _, err := io.ReadAll(c); errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("the client's connection is still open after Serve ended: %v", err)
	}
}
