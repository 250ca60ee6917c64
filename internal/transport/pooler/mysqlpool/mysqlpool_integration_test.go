package mysqlpool

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/tunnelbench/tunnelbench/internal/testing/mysqltest"
)

// The pooler against a real MariaDB (10.11, Debian's): every client through it with the Go MySQL
// driver or sysbench, its counters checked against the server's own (status Connections).

func startPool(t *testing.T, server *mysqltest.Server, size int, serverTLS bool) (*Pool, string) {
	t.Helper()
	cfg := Config{Server: net.JoinHostPort(server.Host, strconv.Itoa(server.Port)), User: server.User,
		Password: server.Password, PoolSize: size}
	if serverTLS {
		pem, err := os.ReadFile(server.CAFile)
		if err != nil {
			t.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(pem)
		cfg.ServerTLS = &tls.Config{RootCAs: roots, ServerName: server.Host, MinVersion: tls.VersionTLS12}
	}
	ctx, cancel := context.WithCancel(context.Background())
	pool, addr, done, err := Start(ctx, cfg, "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return pool, addr.String()
}

// open connects through the pooler as the pool's user, with one connection in the driver's pool
// when single (every statement on the same client connection).
func open(t *testing.T, server *mysqltest.Server, addr, password string, single bool) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = server.User, password, "tcp", addr, server.Database
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	if single {
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// serverConnections is the server's count of connections ever opened to it.
func serverConnections(t *testing.T, db *sql.DB) int {
	t.Helper()
	var name string
	var n int
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Connections'").Scan(&name, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPoolAgainstRealMariaDB(t *testing.T) {
	mysqltest.SkipIfShort(t)
	server, err := mysqltest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Stop)
	direct, err := server.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = direct.Close() })
	direct.SetMaxOpenConns(1)

	t.Run("a storm of short connections shares two TLS server connections", func(t *testing.T) {
		pool, addr := startPool(t, server, 2, true)
		before := serverConnections(t, direct)
		const storm = 300
		for i := range storm {
			db := open(t, server, addr, server.Password, true)
			var one int
			if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("connection %d: %v (%d)", i, err, one)
			}
			_ = db.Close()
		}
		// A client's connection goes back to the pool just after it quits: the next may come first.
		opened := serverConnections(t, direct) - before
		st := pool.Stats()
		t.Logf("%d client connections: the server saw %d new connections; pool %+v", storm, opened, st)
		if st.Clients != storm || st.ServerConnections < 1 || st.ServerConnections > 2 || int(st.ServerConnections) != opened {
			t.Errorf("clients %d (want %d), server connections %d by the pool and %d by the server (want 1 or 2, the same)",
				st.Clients, storm, st.ServerConnections, opened)
		}
		if st.Lends != storm || st.Reused != storm-st.ServerConnections || st.Pinned != 0 {
			t.Errorf("lends %d (want %d), reused %d, pinned %d", st.Lends, storm, st.Reused, st.Pinned)
		}
		if !strings.HasPrefix(st.ServerTLS, "TLSv1.") || !strings.HasSuffix(st.ServerVersion, server.Version) {
			t.Errorf("server TLS %q, version %q (the server's %q)", st.ServerTLS, st.ServerVersion, server.Version)
		}
		// The same counters as the runner reads them, over HTTP.
		srv := httptest.NewServer(pool.StatsHandler())
		t.Cleanup(srv.Close)
		snap, err := Observe(context.Background(), strings.TrimPrefix(srv.URL, "http://"))
		if err != nil || snap.Transactions != st.Lends || snap.ServerConnections != int(st.ServerConnections) ||
			snap.ServerTLS != st.ServerTLS || !snap.WaitCounted || snap.Version != Name {
			t.Errorf("observed %+v, %v from %+v", snap, err, st)
		}
		// The server's end says the same: the statement ran over TLS.
		var name, version string
		row := open(t, server, addr, server.Password, true).QueryRow("SHOW SESSION STATUS LIKE 'Ssl_version'")
		if err := row.Scan(&name, &version); err != nil || !strings.HasPrefix(version, "TLSv1.") {
			t.Errorf("the server's Ssl_version through the pooler: %q, %v", version, err)
		}
	})

	t.Run("results of every shape come back unchanged", func(t *testing.T) {
		_, addr := startPool(t, server, 1, false)
		db := open(t, server, addr, server.Password, false)
		for _, q := range []string{
			"CREATE TABLE shapes (id INT PRIMARY KEY, payload LONGBLOB, note VARCHAR(20))",
			"INSERT INTO shapes VALUES (1, RANDOM_BYTES(1024), NULL), (2, REPEAT('x', 3000000), 'big')",
		} {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		var n int
		var size int64
		var note sql.NullString
		// A prepared statement (the driver prepares, executes and closes it): binary rows.
		row := db.QueryRow("SELECT COUNT(*), SUM(LENGTH(payload)), MAX(note) FROM shapes WHERE id > ?", 0)
		if err := row.Scan(&n, &size, &note); err != nil || n != 2 || size != 1024+3000000 || note.String != "big" {
			t.Errorf("prepared: %d rows, %d bytes, %v: %v", n, size, note, err)
		}
		var payload []byte
		if err := db.QueryRow("SELECT payload FROM shapes WHERE id = 2").Scan(&payload); err != nil || len(payload) != 3000000 {
			t.Errorf("a 3 MB value: %d bytes, %v", len(payload), err)
		}
		rows, err := db.Query("SELECT id, note FROM shapes ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		var ids []int
		for rows.Next() {
			var id int
			if err := rows.Scan(&id, &note); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if err := rows.Close(); err != nil || fmt.Sprint(ids) != "[1 2]" {
			t.Errorf("rows %v: %v", ids, err)
		}
		var mysqlErr *mysql.MySQLError
		if _, err := db.Exec("SELECT * FROM no_such_table"); !errors.As(err, &mysqlErr) || mysqlErr.Number != 1146 {
			t.Errorf("the server's error, relayed: %v", err)
		}
		if err := db.QueryRow("SELECT 2").Scan(&n); err != nil || n != 2 {
			t.Errorf("after an error: %d, %v", n, err)
		}
	})

	t.Run("a transaction holds its server connection; others wait for it", func(t *testing.T) {
		pool, addr := startPool(t, server, 1, false)
		a, b := open(t, server, addr, server.Password, true), open(t, server, addr, server.Password, true)
		if _, err := a.Exec("CREATE TABLE IF NOT EXISTS held (n INT)"); err != nil {
			t.Fatal(err)
		}
		tx, err := a.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("INSERT INTO held VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		got := make(chan int, 1)
		go func() {
			var n int
			_ = b.QueryRow("SELECT COUNT(*) FROM held").Scan(&n)
			got <- n
		}()
		select {
		case n := <-got:
			t.Fatalf("the other client ran while the transaction held the only connection (saw %d rows)", n)
		case <-time.After(300 * time.Millisecond):
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if n := <-got; n != 1 {
			t.Errorf("after the commit the other client saw %d rows, want 1", n)
		}
		if st := pool.Stats(); st.Waits < 1 || st.WaitSeconds <= 0 || st.ServerConnections != 1 {
			t.Errorf("waits %d for %.3f s, server connections %d", st.Waits, st.WaitSeconds, st.ServerConnections)
		}
	})

	t.Run("session state pins the session, and is reset before the next", func(t *testing.T) {
		pool, addr := startPool(t, server, 1, false)
		db := open(t, server, addr, server.Password, true)
		var x sql.NullInt64
		if _, err := db.Exec("SET @x = 5"); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("SELECT @x").Scan(&x); err != nil || x.Int64 != 5 {
			t.Errorf("the session's variable on its own connection: %v, %v", x, err)
		}
		_ = db.Close()
		other := open(t, server, addr, server.Password, true)
		// Once the pinned session gave its connection back (asynchronously), the next sees no @x.
		deadline := time.Now().Add(5 * time.Second)
		for pool.Stats().Resets < 1 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if err := other.QueryRow("SELECT @x").Scan(&x); err != nil || x.Valid {
			t.Errorf("the next client sees the last one's variable: %v, %v", x, err)
		}
		if st := pool.Stats(); st.Pinned != 2 || st.Resets < 1 || st.ServerConnections != 1 {
			// The second session's SELECT @x pins it too.
			t.Errorf("pinned %d (want 2), resets %d, server connections %d", st.Pinned, st.Resets, st.ServerConnections)
		}
	})

	t.Run("clients past the bound are refused as a full server refuses them", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		_, addr, _, err := Start(ctx, Config{Server: net.JoinHostPort(server.Host, strconv.Itoa(server.Port)), User: server.User,
			Password: server.Password, PoolSize: 1, MaxClients: 1}, "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		first := open(t, server, addr.String(), server.Password, true)
		if err := first.Ping(); err != nil {
			t.Fatal(err)
		}
		err = open(t, server, addr.String(), server.Password, true).Ping()
		var mysqlErr *mysql.MySQLError
		if !errors.As(err, &mysqlErr) || mysqlErr.Number != errTooManyConnections {
			t.Errorf("a second client past --max-clients 1: %v", err)
		}
	})

	t.Run("a wrong password is refused by the pooler itself", func(t *testing.T) {
		pool, addr := startPool(t, server, 1, false)
		err := open(t, server, addr, "wrong", true).Ping()
		var mysqlErr *mysql.MySQLError
		if !errors.As(err, &mysqlErr) || mysqlErr.Number != errAccessDenied {
			t.Errorf("a wrong password: %v", err)
		}
		if st := pool.Stats(); st.Clients != 0 || st.ServerConnections != 0 {
			t.Errorf("clients %d, server connections %d after a refused login", st.Clients, st.ServerConnections)
		}
	})

	t.Run("sysbench's transactions through the pooler", func(t *testing.T) {
		pool, addr := startPool(t, server, 2, true)
		host, port, _ := net.SplitHostPort(addr)
		args := []string{"--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port, "--mysql-user=" + server.User,
			"--mysql-password=" + server.Password, "--mysql-db=" + server.Database, "--tables=1", "--table-size=1000",
			"--mysql-ssl=off", "oltp_read_write"}
		if out, err := exec.Command("sysbench", append(args, "prepare")...).CombinedOutput(); err != nil {
			t.Fatalf("prepare: %v\n%s", err, out)
		}
		out, err := exec.Command("sysbench", append(args[:len(args)-1], "--threads=4", "--time=2", "--db-ps-mode=disable",
			"oltp_read_write", "run")...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "transactions:") {
			t.Fatalf("run: %v\n%s", err, out)
		}
		st := pool.Stats()
		t.Logf("sysbench oltp_read_write, 4 threads over 2 server connections: pool %+v", st)
		if st.ServerConnections > 2 || st.Waits == 0 || st.Clients < 5 {
			t.Errorf("server connections %d (at most 2), waits %d (4 threads for 2 connections must wait), clients %d",
				st.ServerConnections, st.Waits, st.Clients)
		}
	})
}

// TestPoolWithoutItsServer: a client of a pooler whose server does not answer gets the pooler's
// error, in a form libmariadb reads (the mariadb command line client).
func TestPoolWithoutItsServer(t *testing.T) {
	mysqltest.SkipIfShort(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	_, addr, _, err := Start(ctx, Config{Server: "127.0.0.1:1", User: "app", Password: "secret", PoolSize: 1}, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(addr.String())
	out, err := exec.Command("mariadb", "--no-defaults", "-h127.0.0.1", "-P"+port, "-uapp", "-psecret", "--skip-ssl",
		"-e", "SELECT 1").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "ERROR 1105") || !strings.Contains(string(out), "the pooler cannot reach the server") {
		t.Errorf("%v: %s", err, out)
	}
}
