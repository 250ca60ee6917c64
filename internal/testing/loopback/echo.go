package loopback

import (
	"io"
	"net"
)

// Echo stands in for a server on a loopback port: it sends back what each connection sends. With
// first > 0 it answers a connection's first that many bytes and closes first, as PostgreSQL does
// on a client's Terminate; with 0 it echoes until the client closes. stop ends it.
func Echo(first int) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go echo(c, first)
		}
	}()
	return ln.Addr().String(), func() { _ = ln.Close() }, nil
}

func echo(c net.Conn, first int) {
	defer func() { _ = c.Close() }()
	if first <= 0 {
		_, _ = io.Copy(c, c)
		return
	}
	buf := make([]byte, first)
	if _, err := io.ReadFull(c, buf); err == nil {
		_, _ = c.Write(buf)
	}
}
