package mysqlpool

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"
)

// Errors the pooler answers with itself (MySQL's codes and states).
const (
	errAccessDenied = 1045
	errUnknownCom   = 1047
	// errTooManyConnections is ER_CON_COUNT_ERROR, as a server past max_connections answers.
	errTooManyConnections = 1040
	// errUnknown (ER_UNKNOWN_ERROR) says the pooler could not lend a connection: a server may
	// not send a client's own codes (2000-2999, such as 2013), which libmariadb then reports as a
	// malformed packet.
	errUnknown       = 1105
	stateAccess      = "28000"
	stateUnsupported = "08S01"
	stateGeneral     = "HY000"
)

// session is one client connection: logged in by the pooler, lent a server connection for each
// statement or transaction.
type session struct {
	pool   *Pool
	client *packetConn
	id     uint32

	charset  byte
	database string
	// server is the connection lent to the session, while a transaction is open or the session
	// is pinned.
	server *serverConn
	// pinned: the session's state lives on its server connection, which it keeps to its end.
	pinned bool
	// failed: the last answer relayed was an ERR.
	failed bool
}

func (s *session) serve(ctx context.Context) {
	defer s.end()
	if err := s.login(); err != nil {
		return
	}
	s.pool.clients.Add(1)
	for ctx.Err() == nil {
		_, p, err := s.client.readPacket()
		if err != nil || len(p) == 0 || p[0] == comQuit {
			return
		}
		if err := s.command(ctx, p); err != nil {
			return
		}
	}
}

// end gives back the server connection the session still holds (pinned, or in a transaction),
// reset: its state goes with the session.
func (s *session) end() {
	if s.server != nil {
		s.pool.giveBack(s.server, true)
		s.server = nil
	}
}

// login greets the client and checks its mysql_native_password answer against the pool's own
// password: the server is not asked.
func (s *session) login() error {
	salt := make([]byte, 20)
	if _, err := rand.Read(salt); err != nil {
		return err
	}
	for i, b := range salt { // the salt is sent NUL-terminated
		if b == 0 {
			salt[i] = 1
		}
	}
	s.pool.mu.Lock()
	version := s.pool.ver
	s.pool.mu.Unlock()
	if version == "" {
		version = "5.5.5-tunnelbench-mysqlpool"
	}
	hs := handshake{version: version, connectionID: s.id, salt: salt, capabilities: poolCapabilities,
		charset: 45, status: statusAutocommit, plugin: nativePassword}
	if err := s.client.writePacket(0, hs.encode()); err != nil {
		return err
	}
	seq, p, err := s.client.readPacket()
	if err != nil {
		return err
	}
	resp, err := parseHandshakeResponse(p)
	if err != nil {
		_ = s.client.writePacket(seq+1, errPacket(errAccessDenied, stateAccess, err.Error()))
		return err
	}
	seq++
	auth := resp.auth
	if resp.plugin != "" && resp.plugin != nativePassword {
		// Another plugin's answer (caching_sha2_password's): ask for mysql_native_password's.
		if err := s.client.writePacket(seq, append(append(append([]byte{headerEOF}, nativePassword...), 0), append(salt, 0)...)); err != nil {
			return err
		}
		if seq, auth, err = s.client.readPacket(); err != nil {
			return err
		}
		seq++
	}
	want := nativeScramble(salt, s.pool.cfg.Password)
	if resp.user != s.pool.cfg.User || subtle.ConstantTimeCompare(auth, want) != 1 {
		msg := fmt.Sprintf("Access denied for user '%s' (the pooler admits its own user only, with its password)", resp.user)
		_ = s.client.writePacket(seq, errPacket(errAccessDenied, stateAccess, msg))
		return errors.New(msg)
	}
	s.charset, s.database = resp.charset, resp.database
	return s.client.writePacket(seq, okPacket(statusAutocommit))
}

// command serves one client command.
func (s *session) command(ctx context.Context, p []byte) error {
	switch p[0] {
	case comPing:
		return s.client.writePacket(1, okPacket(statusAutocommit))
	case comResetConnection:
		if s.server == nil {
			return s.client.writePacket(1, okPacket(statusAutocommit))
		}
		// The client's own reset ends its pin: its session has no state left.
		err := s.relay(ctx, p)
		if err == nil && !s.failed && s.server != nil {
			s.pinned = false
			s.pool.giveBack(s.server, false)
			s.server = nil
		}
		return err
	case comChangeUser:
		return s.client.writePacket(1, errPacket(errUnknownCom, stateUnsupported,
			"COM_CHANGE_USER is not supported through the pooler: it admits its own user only"))
	case comInitDB:
		if err := s.relay(ctx, p); err != nil {
			return err
		}
		if !s.failed {
			s.database = string(p[1:])
		}
		return nil
	case comQuery, comStmtPrepare, comStmtExecute, comStmtSendLong, comStmtClose, comStmtReset, comStmtFetch,
		comSetOption, comFieldList, comStatistics:
		if pins(p) && !s.pinned {
			s.pinned = true
			s.pool.pinned.Add(1)
		}
		return s.relay(ctx, p)
	}
	return s.client.writePacket(1, errPacket(errUnknownCom, stateUnsupported,
		fmt.Sprintf("command 0x%02x is not supported through the pooler", p[0])))
}

// relay sends a command to a server connection (the session's, or one lent for it) and its
// answer back to the client unchanged, then gives the connection back unless the session keeps
// it: pinned, or inside a transaction (or with autocommit off).
func (s *session) relay(ctx context.Context, p []byte) error {
	if s.server == nil {
		server, err := s.pool.lend(ctx, s.charset, s.database)
		if err != nil {
			_ = s.client.writePacket(1, errPacket(errUnknown, stateGeneral, "the pooler cannot reach the server: "+err.Error()))
			return err
		}
		s.server = server
	}
	if err := s.forward(p); err != nil {
		return s.broken(err)
	}
	s.failed = false
	status, err := s.answer(p[0])
	if err == nil {
		err = s.client.flush()
	}
	if err != nil {
		return s.broken(err)
	}
	s.server.lastStatus = status
	if p[0] == comInitDB {
		s.server.database, s.server.databaseKnown = string(p[1:]), !s.failed
	}
	// A finished transaction leaves nothing behind: the connection goes back as it is.
	if !s.pinned && status&statusInTrans == 0 && status&statusAutocommit != 0 {
		s.pool.giveBack(s.server, false)
		s.server = nil
	}
	return nil
}

// broken drops a server connection that failed mid-command; the client's connection ends with it,
// as it would have with the server's.
func (s *session) broken(err error) error {
	s.pool.discard(s.server)
	s.server = nil
	return err
}

// forward sends a client's command, continued over as many packets as it spans.
func (s *session) forward(p []byte) error {
	seq := byte(0)
	for {
		if err := s.server.writePacket(seq, p); err != nil {
			return err
		}
		if len(p) < maxPayload {
			return nil
		}
		var err error
		if seq, p, err = s.client.readPacket(); err != nil {
			return err
		}
	}
}

// answer relays the server's answer to a command and returns the status flags it ended with
// (the previous ones when it says none: an ERR, a prepared statement's metadata).
func (s *session) answer(command byte) (uint16, error) {
	status := s.server.lastStatus
	switch command {
	case comStmtSendLong, comStmtClose: // no answer
		return status, nil
	case comStatistics: // one string
		_, err := s.relayPacket()
		return status, err
	case comStmtPrepare:
		return status, s.relayPrepare()
	case comFieldList, comStmtFetch: // column definitions or rows until an EOF
		return s.relayRows(status)
	}
	return s.relayResults(status)
}

// relayResults relays OK, ERR or result sets (text or binary rows) until the last result.
func (s *session) relayResults(status uint16) (uint16, error) {
	for {
		p, err := s.relayPacket()
		if err != nil {
			return status, err
		}
		switch {
		case len(p) == 0:
			return status, errors.New("an empty packet in a result")
		case p[0] == headerErr:
			s.failed = true
			return status, nil
		case p[0] == headerOK || isEOF(p): // OK, or COM_SET_OPTION's EOF
			if p[0] == headerOK {
				if status, err = okStatus(p); err != nil {
					return status, err
				}
			} else {
				status = eofStatus(p)
			}
			if status&statusMoreResults == 0 {
				return status, nil
			}
			continue
		case p[0] == 0xfb:
			return status, errors.New("the server asked for a local file, which the pooler does not offer")
		}
		columns, _, err := lenenc(p)
		if err != nil {
			return status, err
		}
		if err := s.relayPackets(int(columns)); err != nil {
			return status, err
		}
		// The columns' EOF: a cursor opened by COM_STMT_EXECUTE sends rows only on COM_STMT_FETCH.
		eof, err := s.relayPacket()
		if err != nil {
			return status, err
		}
		if status = eofStatus(eof); status&statusCursorExists != 0 {
			return status, nil
		}
		if status, err = s.relayRows(status); err != nil || status&statusMoreResults == 0 {
			return status, err
		}
	}
}

// relayRows relays rows (or column definitions) until the EOF or ERR that ends them.
func (s *session) relayRows(status uint16) (uint16, error) {
	for {
		p, err := s.relayPacket()
		switch {
		case err != nil:
			return status, err
		case isEOF(p):
			return eofStatus(p), nil
		case p[0] == headerErr:
			s.failed = true
			return status, nil
		}
	}
}

// relayPrepare relays COM_STMT_PREPARE's answer: its OK with the parameters' and columns'
// definitions, each list ended by an EOF.
func (s *session) relayPrepare() error {
	p, err := s.relayPacket()
	if err != nil || p[0] != headerOK || len(p) < 9 {
		s.failed = err == nil && p[0] == headerErr
		return err
	}
	columns, params := int(p[5])|int(p[6])<<8, int(p[7])|int(p[8])<<8
	for _, n := range []int{params, columns} {
		if n > 0 {
			if err := s.relayPackets(n + 1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *session) relayPackets(n int) error {
	for range n {
		if _, err := s.relayPacket(); err != nil {
			return err
		}
	}
	return nil
}

// relayPacket relays one packet of the server's, with the packets that continue it, and returns
// its first part (what says which packet it is). It queues them: relay flushes the whole answer.
func (s *session) relayPacket() ([]byte, error) {
	seq, p, err := s.server.readPacket()
	if err != nil {
		return nil, err
	}
	if err := s.client.queue(seq, p); err != nil {
		return nil, err
	}
	first := p
	for len(p) == maxPayload {
		if seq, p, err = s.server.readPacket(); err != nil {
			return nil, err
		}
		if err := s.client.queue(seq, p); err != nil {
			return nil, err
		}
	}
	if len(first) == 0 {
		return nil, io.ErrUnexpectedEOF
	}
	return first, nil
}

// Pinning statements: after one, the session keeps its server connection to its end (as ProxySQL
// stops multiplexing), its effect outliving it there. SET covers session variables, names and the
// transaction's isolation; @ (not @@) user variables; LAST_INSERT_ID, FOUND_ROWS, ROW_COUNT and
// SHOW WARNINGS read the statement before them. Checked on every query, so the cheap tests come
// first: the first words, an @, then the functions only where a parenthesis or an underscore is.
var (
	pinningFirstWords = map[string]bool{"SET": true, "USE": true, "LOCK": true, "PREPARE": true, "HANDLER": true}
	pinningSecondWord = map[string]map[string]bool{
		"CREATE": {"TEMPORARY": true},
		"SHOW":   {"WARNINGS": true, "ERRORS": true, "COUNT": true},
	}
	userVariable     = regexp.MustCompile(`(^|[^@\w])@\w`)
	pinningFunctions = regexp.MustCompile(`(?i)\b(GET_LOCK|LAST_INSERT_ID|FOUND_ROWS|ROW_COUNT)\s*\(|\bSQL_CALC_FOUND_ROWS\b`)
)

// pins tells whether a command ties the session to its server connection.
func pins(p []byte) bool {
	switch p[0] {
	case comStmtPrepare, comSetOption:
		return true
	case comQuery:
		return pinningQuery(stripComments(p[1:]))
	}
	return false
}

func pinningQuery(q []byte) bool {
	words := bytes.Fields(q[:min(len(q), 64)])
	if len(words) > 0 {
		first := strings.ToUpper(string(words[0]))
		if pinningFirstWords[first] || len(words) > 1 && pinningSecondWord[first][strings.ToUpper(leadingLetters(words[1]))] {
			return true
		}
	}
	if bytes.IndexByte(q, '@') >= 0 && userVariable.Match(q) {
		return true
	}
	return bytes.ContainsAny(q, "(_") && pinningFunctions.Match(q)
}

// leadingLetters is a word up to its first character that is not a letter: COUNT of COUNT(*).
func leadingLetters(w []byte) string {
	end := bytes.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) })
	if end < 0 {
		return string(w)
	}
	return string(w[:end])
}

// stripComments drops the leading comments of a statement, so a hint before SET still pins.
func stripComments(q []byte) []byte {
	for {
		q = bytes.TrimLeft(q, " \t\r\n")
		switch {
		case bytes.HasPrefix(q, []byte("/*")):
			end := bytes.Index(q, []byte("*/"))
			if end < 0 {
				return nil
			}
			q = q[end+2:]
		case bytes.HasPrefix(q, []byte("-- ")), bytes.HasPrefix(q, []byte("#")):
			end := bytes.IndexByte(q, '\n')
			if end < 0 {
				return nil
			}
			q = q[end+1:]
		default:
			return q
		}
	}
}
