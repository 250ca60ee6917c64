package mysqlpool

import (
	"bytes"
	"testing"
)

func TestPins(t *testing.T) {
	for _, tt := range []struct {
		command byte
		query   string
		want    bool
	}{
		{comQuery, "SELECT 1", false},
		{comQuery, "select c from sbtest1 where id=5", false},
		{comQuery, "BEGIN", false},
		{comQuery, "COMMIT", false},
		{comQuery, "SELECT @@version", false},
		{comQuery, "INSERT INTO t VALUES ('x')", false},
		{comQuery, "SET NAMES utf8mb4", true},
		{comQuery, "  set autocommit=0", true},
		{comQuery, "/* a hint */ SET SESSION sql_mode=''", true},
		{comQuery, "-- a comment\nSET @a = 1", true},
		{comQuery, "SELECT @x", true},
		{comQuery, "SELECT @@x, @y", true},
		{comQuery, "USE other", true},
		{comQuery, "LOCK TABLES t WRITE", true},
		{comQuery, "CREATE TEMPORARY TABLE tmp (a int)", true},
		{comQuery, "SELECT GET_LOCK('a', 1)", true},
		{comQuery, "SELECT LAST_INSERT_ID()", true},
		{comQuery, "SELECT SQL_CALC_FOUND_ROWS * FROM t", true},
		{comQuery, "SHOW WARNINGS", true},
		{comQuery, "SHOW TABLES", false},
		{comQuery, "show count(*) warnings", true},
		{comQuery, "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 100", false},
		{comQuery, "SELECT found_rows ()", true},
		{comQuery, "SELECT 'user@example.com'", false},
		{comQuery, "SETTINGS", false},
		{comStmtPrepare, "SELECT ?", true},
		{comSetOption, "\x00\x00", true},
		{comStmtExecute, "", false},
		{comPing, "", false},
	} {
		if got := pins(append([]byte{tt.command}, tt.query...)); got != tt.want {
			t.Errorf("command 0x%02x %q: pins %v, want %v", tt.command, tt.query, got, tt.want)
		}
	}
}

func TestHandshakeRoundTrip(t *testing.T) {
	salt := bytes.Repeat([]byte{7}, 20)
	in := handshake{version: "5.5.5-10.11.19-MariaDB", connectionID: 42, salt: salt, capabilities: poolCapabilities | capSSL,
		charset: 45, status: statusAutocommit, plugin: nativePassword}
	out, err := parseHandshake(in.encode())
	if err != nil {
		t.Fatal(err)
	}
	if out.version != in.version || out.connectionID != 42 || !bytes.Equal(out.salt, salt) || out.capabilities != in.capabilities ||
		out.charset != 45 || out.status != statusAutocommit || out.plugin != nativePassword {
		t.Errorf("parsed %+v from %+v", out, in)
	}
	resp := handshakeResponse{capabilities: poolCapabilities, charset: 33, user: "app", auth: nativeScramble(salt, "pw"),
		database: "db", plugin: nativePassword}
	got, err := parseHandshakeResponse(resp.encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.user != "app" || got.database != "db" || got.plugin != nativePassword || got.charset != 33 || !bytes.Equal(got.auth, resp.auth) {
		t.Errorf("parsed %+v from %+v", got, resp)
	}
}

func TestLenenc(t *testing.T) {
	for _, v := range []uint64{0, 250, 251, 65535, 65536, 1<<24 - 1, 1 << 24, 1 << 40} {
		b := appendLenenc(nil, v)
		got, n, err := lenenc(b)
		if err != nil || got != v || n != len(b) {
			t.Errorf("%d: encoded %x, read %d in %d bytes, %v", v, b, got, n, err)
		}
	}
	if _, _, err := lenenc([]byte{0xfc, 1}); err == nil {
		t.Error("a cut integer read without an error")
	}
}
