package mysqlpool

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// serverConn is one of the pooler's connections to the server, logged in as the pool's user.
type serverConn struct {
	*packetConn
	conn    net.Conn
	charset byte
	// database is the connection's current database, when known.
	database      string
	databaseKnown bool
	// version is what the server's greeting says it is.
	version string
	tls     string
	// lastStatus is the status flags of the connection's last answer.
	lastStatus uint16
}

// dialServer opens a connection to the server and logs in: TLS first when the pool has a TLS
// configuration, then mysql_native_password (MariaDB's default) or caching_sha2_password
// (MySQL 8's), each answered to the plugin the server asks for.
func dialServer(ctx context.Context, cfg Config, charset byte, database string) (*serverConn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", cfg.Server)
	if err != nil {
		return nil, err
	}
	s := &serverConn{packetConn: newPacketConn(conn), conn: conn, charset: charset, database: database, databaseKnown: true,
		lastStatus: statusAutocommit}
	if err := s.login(cfg, database); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("cannot log in to the server %s: %w", cfg.Server, err)
	}
	return s, nil
}

func (s *serverConn) login(cfg Config, database string) error {
	_ = s.conn.SetDeadline(time.Now().Add(10 * time.Second))
	defer func() { _ = s.conn.SetDeadline(time.Time{}) }()
	_, p, err := s.readPacket()
	if err != nil {
		return err
	}
	hs, err := parseHandshake(p)
	if err != nil {
		return err
	}
	s.version = hs.version
	// MariaDB clears the first flag (its CLIENT_MYSQL, MySQL's LONG_PASSWORD) to say it is MariaDB.
	if need := poolCapabilities &^ capLongPassword; hs.capabilities&need != need {
		return fmt.Errorf("the server lacks capabilities the pooler needs (has 0x%x, needs 0x%x)", hs.capabilities, need)
	}
	caps := poolCapabilities
	if database == "" {
		caps &^= capConnectWithDB
	}
	seq := byte(1)
	if cfg.ServerTLS != nil {
		if hs.capabilities&capSSL == 0 {
			return errors.New("the server does not offer TLS, which the pooler's serverTLS requires")
		}
		if err := s.writePacket(seq, sslRequest(caps, s.charset)); err != nil {
			return err
		}
		seq++
		tc := tls.Client(s.conn, cfg.ServerTLS)
		if err := tc.Handshake(); err != nil {
			return fmt.Errorf("TLS: %w", err)
		}
		st := tc.ConnectionState()
		s.conn, s.packetConn = tc, newPacketConn(tc)
		// OpenSSL's spelling ("TLSv1.3"), as the server and PgBouncer report theirs.
		s.tls = strings.Replace(tls.VersionName(st.Version), "TLS ", "TLSv", 1) + "/" + tls.CipherSuiteName(st.CipherSuite)
		caps |= capSSL
	}
	resp := handshakeResponse{capabilities: caps, charset: s.charset, user: cfg.User, database: database, plugin: hs.plugin}
	switch hs.plugin {
	case cachingSHA2Password:
		resp.auth = sha2Scramble(hs.salt, cfg.Password)
	default:
		resp.plugin = nativePassword
		resp.auth = nativeScramble(hs.salt, cfg.Password)
	}
	if err := s.writePacket(seq, resp.encode()); err != nil {
		return err
	}
	return s.authenticate(cfg, resp.plugin)
}

// authenticate reads the server's answers to the login until its OK: an auth switch to another
// plugin (answered with that plugin's scramble), caching_sha2_password's fast path or its request
// for the password (sent only over TLS), or an ERR.
func (s *serverConn) authenticate(cfg Config, plugin string) error {
	for {
		rseq, p, err := s.readPacket()
		if err != nil {
			return err
		}
		seq := rseq + 1
		if len(p) == 0 {
			return errors.New("an empty packet during the login")
		}
		switch p[0] {
		case headerOK:
			return nil
		case headerErr:
			return errors.New(errMessage(p))
		case headerEOF: // an auth switch: the plugin's name, then its salt
			name, salt, _ := bytes.Cut(p[1:], []byte{0})
			var answer []byte
			switch string(name) {
			case nativePassword:
				answer = nativeScramble(bytes.TrimRight(salt, "\x00"), cfg.Password)
			case cachingSHA2Password:
				answer = sha2Scramble(bytes.TrimRight(salt, "\x00"), cfg.Password)
			case clearPassword:
				if cfg.ServerTLS == nil {
					return errors.New("the server asks for the cleartext password on a connection without TLS")
				}
				answer = append([]byte(cfg.Password), 0)
			default:
				return fmt.Errorf("the server asks for the authentication plugin %q, which the pooler does not speak", name)
			}
			plugin = string(name)
			if err := s.writePacket(seq, answer); err != nil {
				return err
			}
		case 0x01: // more data: caching_sha2_password's fast path succeeded (3) or wants the password (4)
			if plugin != cachingSHA2Password || len(p) < 2 {
				return fmt.Errorf("an unexpected packet 0x01 during the login with %s", plugin)
			}
			if p[1] == 4 {
				if cfg.ServerTLS == nil {
					return errors.New("caching_sha2_password needs the full login, which the pooler sends only over TLS")
				}
				if err := s.writePacket(seq, append([]byte(cfg.Password), 0)); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("an unexpected packet 0x%02x during the login", p[0])
		}
	}
}

// command sends one command of the pooler's own (COM_INIT_DB, COM_RESET_CONNECTION) and reads its
// OK or ERR.
func (s *serverConn) command(payload []byte) error {
	if err := s.writePacket(0, payload); err != nil {
		return err
	}
	_, p, err := s.readPacket()
	switch {
	case err != nil:
		return err
	case len(p) > 0 && p[0] == headerOK:
		return nil
	case len(p) > 0 && p[0] == headerErr:
		return errors.New(errMessage(p))
	}
	return fmt.Errorf("an unexpected answer 0x%x to command 0x%02x", p, payload[0])
}

func (s *serverConn) useDatabase(name string) error {
	if err := s.command(append([]byte{comInitDB}, name...)); err != nil {
		return err
	}
	s.database, s.databaseKnown = name, true
	return nil
}

// reset clears a session's state (its transaction rolled back, its variables, prepared
// statements and temporary tables dropped) before another client gets the connection.
func (s *serverConn) reset() error {
	s.databaseKnown, s.lastStatus = false, statusAutocommit
	return s.command([]byte{comResetConnection})
}

func (s *serverConn) close() {
	_ = s.writePacket(0, []byte{comQuit})
	_ = s.conn.Close()
}
