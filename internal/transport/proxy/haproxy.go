package proxy

// HAProxy's side of the transport: its configuration (a TCP hop to the server and nothing else) and
// the counters it serves as CSV, for the transport's evidence.

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

const (
	// ListenPort is where the proxy accepts PostgreSQL connections.
	ListenPort = 5432
	// StatsPort serves HAProxy's statistics page.
	StatsPort = 8404
	// StatsPath is the page's CSV.
	StatsPath = "/stats;csv"
	// Frontend names the proxy's client side in its configuration and its counters.
	Frontend = "postgres"
	// Backend names its server side.
	Backend = "server"
)

// Config is the proxy: TCP mode, one server, connections held as long as the clients hold them.
type Config struct {
	// Target is the server, host:port.
	Target string
	// MaxConn bounds the connections HAProxy accepts at once.
	MaxConn int
	// Port and StatsPort, when set, replace ListenPort and StatsPort.
	Port, StatsPort int
}

// Render is the configuration file. TCP mode passes libpq's own TLS through untouched, as a cloud
// TCP load balancer or HAProxy in front of Patroni does; timeouts are long so that the proxy never
// ends a benchmark's connection, and no health check adds connections of its own to the server.
func (c Config) Render() (string, error) {
	if c.Target == "" || strings.ContainsAny(c.Target, " \n#") {
		return "", fmt.Errorf("invalid target %q", c.Target)
	}
	maxConn, port, stats := cmp.Or(c.MaxConn, 4096), cmp.Or(c.Port, ListenPort), cmp.Or(c.StatsPort, StatsPort)
	return fmt.Sprintf(`global
  maxconn %[1]d
  log stderr format raw local0 notice

defaults
  mode tcp
  log global
  option dontlognull
  timeout connect 10s
  timeout client 1h
  timeout server 1h

frontend %[2]s
  bind :%[3]d
  default_backend %[4]s

backend %[4]s
  server postgres %[5]s

frontend stats
  mode http
  bind :%[6]d
  stats enable
  stats uri /stats
`, maxConn, Frontend, port, Backend, c.Target, stats), nil
}

// Counters are what the proxy counted on one side.
type Counters struct {
	// Sessions is the cumulated number of connections (stot).
	Sessions int64
	// BytesIn and BytesOut are bytes received from clients and sent to them (bin, bout).
	BytesIn, BytesOut int64
	// ConnectionErrors are failed connections to the server (econ), a backend's only.
	ConnectionErrors int64
}

// Stats are the proxy's counters of its frontend and backend.
type Stats struct {
	Frontend, Backend Counters
}

// ParseCSV reads HAProxy's statistics CSV ("# pxname,svname,...").
func ParseCSV(r io.Reader) (Stats, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return Stats{}, fmt.Errorf("no header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimPrefix(strings.TrimSpace(h), "# ")] = i
	}
	for _, name := range []string{"pxname", "svname", "stot", "bin", "bout", "econ"} {
		if _, ok := col[name]; !ok {
			return Stats{}, fmt.Errorf("no column %s", name)
		}
	}
	var s Stats
	found := 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Stats{}, err
		}
		field := func(name string) int64 {
			if i := col[name]; i < len(rec) {
				n, _ := strconv.ParseInt(rec[i], 10, 64)
				return n
			}
			return 0
		}
		c := Counters{Sessions: field("stot"), BytesIn: field("bin"), BytesOut: field("bout"), ConnectionErrors: field("econ")}
		switch {
		case rec[col["pxname"]] == Frontend && rec[col["svname"]] == "FRONTEND":
			s.Frontend, found = c, found+1
		case rec[col["pxname"]] == Backend && rec[col["svname"]] == "BACKEND":
			s.Backend, found = c, found+1
		}
	}
	if found < 2 {
		return Stats{}, fmt.Errorf("the proxy's %s frontend or %s backend is missing", Frontend, Backend)
	}
	return s, nil
}

// Sub is what was counted between two readings.
func (c Counters) Sub(before Counters) Counters {
	return Counters{Sessions: c.Sessions - before.Sessions, BytesIn: c.BytesIn - before.BytesIn,
		BytesOut: c.BytesOut - before.BytesOut, ConnectionErrors: c.ConnectionErrors - before.ConnectionErrors}
}
