// Package mysqlpool is TunnelBench's MySQL pooler: many short client connections over a few
// long server connections, as ProxySQL multiplexes them. It logs its clients in itself (the
// pool's own user and password, mysql_native_password), so a new client costs no round trip to
// the server, and lends a server connection (over TLS when the pool is configured so) for a
// statement, or for as long as a transaction is open, relaying the server's packets unchanged.
// A session whose state would not survive another connection (prepared statements, user
// variables, SET, locks, temporary tables) keeps its server connection to its end, and the
// connection is reset (COM_RESET_CONNECTION) before another client gets it.
//
// Why not MySQL Router 9.7 (Debian sid), which shares connections the same way: its sharing
// sets MySQL's session trackers on every server connection (session_track_gtids among them),
// which MariaDB does not have, so every statement fails against MariaDB with sharing on; with it
// off, Router opens a server connection per client (tried on 2026-12-03 against MariaDB 10.11:
// docs/development/engines.md).
package mysqlpool

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Config is a pool: where it listens, the server it lends connections to and as whom.
type Config struct {
	// Server is the server's host:port.
	Server string
	// User and Password are the pool's login, on both sides: clients log in to the pooler with
	// them, and the pooler to the server.
	User, Password string
	// ServerTLS, when set, encrypts every server connection (and verifies the server as it says).
	ServerTLS *tls.Config
	// PoolSize bounds the server connections open at once.
	PoolSize int
	// MaxClients bounds the client connections at once (0: no bound); the next is refused, as a
	// server refuses past max_connections.
	MaxClients int
}

// Stats are the pooler's counters: its evidence of what it shared.
type Stats struct {
	// Clients is how many client connections logged in; ServerConnections how many server
	// connections the pool opened in all (a pool that shares opens far fewer).
	Clients           int64 `json:"clients"`
	ServerConnections int64 `json:"serverConnections"`
	// Lends is how many times a client got a server connection (a statement, or a transaction
	// held to its end); Reused how many of them went to a connection already open.
	Lends  int64 `json:"lends"`
	Reused int64 `json:"reused"`
	// Waits is how many lends waited for a connection (every one busy, the pool at its size),
	// WaitSeconds their time together.
	Waits       int64   `json:"waits"`
	WaitSeconds float64 `json:"waitSeconds"`
	// Pinned is how many sessions kept their server connection to their end; Resets how many
	// connections were reset before they were lent again.
	Pinned int64 `json:"pinned"`
	Resets int64 `json:"resets"`
	// ServerTLS is the TLS version and cipher of the last server connection opened, "none"
	// without TLS; ServerVersion the server's greeting.
	ServerTLS     string `json:"serverTLS"`
	ServerVersion string `json:"serverVersion"`
}

// Pool lends server connections to client sessions.
type Pool struct {
	cfg   Config
	slots chan struct{}

	mu   sync.Mutex
	idle []*serverConn
	tls  string
	ver  string

	nextID                                                 atomic.Uint32
	clients, servers, lends, reused, waits, pinned, resets atomic.Int64
	waitNanos, active                                      atomic.Int64
}

// New makes a pool; it opens no connection until a client needs one.
func New(cfg Config) (*Pool, error) {
	if cfg.PoolSize < 1 {
		return nil, fmt.Errorf("a pool of %d server connections", cfg.PoolSize)
	}
	if cfg.Server == "" || cfg.User == "" {
		return nil, errors.New("a pool needs the server's address and a user")
	}
	return &Pool{cfg: cfg, slots: make(chan struct{}, cfg.PoolSize), tls: "none"}, nil
}

// Stats reads the counters.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	tlsName, version := p.tls, p.ver
	p.mu.Unlock()
	return Stats{
		Clients: p.clients.Load(), ServerConnections: p.servers.Load(), Lends: p.lends.Load(), Reused: p.reused.Load(),
		Waits: p.waits.Load(), WaitSeconds: time.Duration(p.waitNanos.Load()).Seconds(), Pinned: p.pinned.Load(),
		Resets: p.resets.Load(), ServerTLS: tlsName, ServerVersion: version,
	}
}

// StatsHandler serves the counters as JSON.
func (p *Pool) StatsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(p.Stats())
	})
}

// Start makes a pool of cfg and serves it on addr until ctx ends; done receives Serve's end.
func Start(ctx context.Context, cfg Config, addr string) (pool *Pool, listening net.Addr, done <-chan error, err error) {
	if pool, err = New(cfg); err != nil {
		return nil, nil, nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, nil, err
	}
	served := make(chan error, 1)
	go func() { served <- pool.Serve(ctx, ln) }()
	return pool, ln.Addr(), served, nil
}

// Serve accepts clients on ln until ctx ends.
func (p *Pool) Serve(ctx context.Context, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		_ = ln.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				p.closeIdle()
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { _ = conn.Close() }()
			s := &session{pool: p, client: newPacketConn(conn), id: p.nextID.Add(1)}
			if n := p.active.Add(1); p.cfg.MaxClients > 0 && n > int64(p.cfg.MaxClients) {
				_ = s.client.writePacket(0, errPacket(errTooManyConnections, stateGeneral, fmt.Sprintf(
					"Too many connections: the pooler admits %d clients at once", p.cfg.MaxClients)))
			} else {
				s.serve(ctx)
			}
			p.active.Add(-1)
		}()
	}
}

// lend gives a session a server connection with its charset and database: an idle one when
// there is one, a new one while the pool is below its size, else the first to come back.
func (p *Pool) lend(ctx context.Context, charset byte, database string) (*serverConn, error) {
	select {
	case p.slots <- struct{}{}:
	default:
		start := time.Now()
		p.waits.Add(1)
		select {
		case p.slots <- struct{}{}:
			p.waitNanos.Add(int64(time.Since(start)))
		case <-ctx.Done():
			p.waitNanos.Add(int64(time.Since(start)))
			return nil, ctx.Err()
		}
	}
	p.lends.Add(1)
	p.mu.Lock()
	var s *serverConn
	for i := len(p.idle) - 1; i >= 0; i-- {
		if p.idle[i].charset == charset {
			s = p.idle[i]
			p.idle = append(p.idle[:i], p.idle[i+1:]...)
			break
		}
	}
	if s == nil && len(p.idle) > 0 {
		// The pool is full of another charset's connections: one goes, to make room.
		defer p.idle[0].close()
		p.idle = p.idle[1:]
	}
	p.mu.Unlock()
	if s != nil {
		p.reused.Add(1)
		if database != "" && (!s.databaseKnown || s.database != database) {
			if err := s.useDatabase(database); err != nil {
				p.discard(s)
				return nil, err
			}
		}
		return s, nil
	}
	s, err := dialServer(ctx, p.cfg, charset, database)
	if err != nil {
		<-p.slots
		return nil, err
	}
	p.servers.Add(1)
	p.mu.Lock()
	p.tls, p.ver = "none", s.version
	if s.tls != "" {
		p.tls = s.tls
	}
	p.mu.Unlock()
	return s, nil
}

// giveBack returns a lent connection: reset first when the session left state on it.
func (p *Pool) giveBack(s *serverConn, dirty bool) {
	if dirty {
		p.resets.Add(1)
		if err := s.reset(); err != nil {
			p.discard(s)
			return
		}
	}
	p.mu.Lock()
	p.idle = append(p.idle, s)
	p.mu.Unlock()
	<-p.slots
}

// discard closes a connection that broke, or whose state cannot be cleared.
func (p *Pool) discard(s *serverConn) {
	_ = s.conn.Close()
	<-p.slots
}

func (p *Pool) closeIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.idle {
		s.close()
	}
	p.idle = nil
}
