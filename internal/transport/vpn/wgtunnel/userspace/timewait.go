package userspace

import (
	"errors"
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"golang.zx2c4.com/wireguard/tun/netstack"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

// TimeWait is how long an end's network stack keeps a connection it closed first in TIME_WAIT.
// gVisor's default, 60 s, holds about 40 KB per connection: a client storm of 85 connections a
// second kept some 5,000 of them, and the sidecar was killed at its memory limit about two minutes
// in (seen as one connection lost at the 7,000th). Inside the tunnel the peer is one gateway that
// closes completely and no packet lingers for seconds, so two seconds guard against a late
// segment without holding thousands of connections.
const TimeWait = 2 * time.Second

// netstackStack is the gVisor stack behind wireguard-go's netstack.Net, which does not export it
// (its type is an unexported struct whose field "stack" holds it). The field is found by name and
// type, so a wireguard-go whose struct changed fails here, at Start, rather than misbehaving.
func netstackStack(n *netstack.Net) (*stack.Stack, error) {
	v := reflect.ValueOf(n).Elem().FieldByName("stack")
	if !v.IsValid() || v.Type() != reflect.TypeOf((*stack.Stack)(nil)) {
		return nil, errors.New("wireguard-go's netstack.Net has no field stack of type *stack.Stack")
	}
	// The field is unexported: read through its address. n outlives the returned stack's use.
	return *(**stack.Stack)(unsafe.Pointer(v.UnsafeAddr())), nil //nolint:gosec // see above
}

// setTimeWait sets the stack's TIME_WAIT duration.
func setTimeWait(n *netstack.Net, d time.Duration) error {
	s, err := netstackStack(n)
	if err != nil {
		return err
	}
	opt := tcpip.TCPTimeWaitTimeoutOption(d)
	if err := s.SetTransportProtocolOption(tcp.ProtocolNumber, &opt); err != nil {
		return fmt.Errorf("cannot set TIME_WAIT to %s: %s", d, err)
	}
	return nil
}

// timeWait reads the stack's TIME_WAIT duration.
func timeWait(n *netstack.Net) (time.Duration, error) {
	s, err := netstackStack(n)
	if err != nil {
		return 0, err
	}
	var opt tcpip.TCPTimeWaitTimeoutOption
	if err := s.TransportProtocolOption(tcp.ProtocolNumber, &opt); err != nil {
		return 0, fmt.Errorf("cannot read TIME_WAIT: %s", err)
	}
	return time.Duration(opt), nil
}
