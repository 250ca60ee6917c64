package mysqlpool

import (
	"bufio"
	"bytes"
	"crypto/sha1" //nolint:gosec // mysql_native_password is SHA-1 by definition.
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The classic protocol's pieces the pooler speaks: packets, the handshake on both sides, OK, EOF
// and ERR. Only what a pooler that relays results unchanged must read is decoded; a row or a
// column definition passes through as bytes.

// maxPayload is a packet's largest payload: a longer one continues in the packets after it.
const maxPayload = 1<<24 - 1

// Capability flags (the protocol's CLIENT_*).
const (
	capLongPassword     uint32 = 1
	capLongFlag         uint32 = 1 << 2
	capConnectWithDB    uint32 = 1 << 3
	capProtocol41       uint32 = 1 << 9
	capSSL              uint32 = 1 << 11
	capTransactions     uint32 = 1 << 13
	capSecureConnection uint32 = 1 << 15
	capMultiResults     uint32 = 1 << 17
	capPSMultiResults   uint32 = 1 << 18
	capPluginAuth       uint32 = 1 << 19
	capPluginAuthLenenc uint32 = 1 << 21
)

// poolCapabilities are the capabilities of every server connection, and all the pooler offers
// its clients: a result relayed from a server connection is in the form the client negotiated
// only if both negotiated the same flags that shape results. Not offered: DEPRECATE_EOF and
// SESSION_TRACK (results would end in OK packets the relay would have to tell from rows),
// MULTI_STATEMENTS, FOUND_ROWS (affected rows would mean another thing), LOCAL_FILES and COMPRESS.
const poolCapabilities = capLongPassword | capLongFlag | capConnectWithDB | capProtocol41 | capTransactions |
	capSecureConnection | capMultiResults | capPSMultiResults | capPluginAuth | capPluginAuthLenenc

// Server status flags (SERVER_STATUS_*, SERVER_MORE_RESULTS_EXISTS).
const (
	statusInTrans      uint16 = 1
	statusAutocommit   uint16 = 1 << 1
	statusMoreResults  uint16 = 1 << 3
	statusCursorExists uint16 = 1 << 6
)

// Commands (COM_*).
const (
	comQuit            byte = 0x01
	comInitDB          byte = 0x02
	comQuery           byte = 0x03
	comFieldList       byte = 0x04
	comStatistics      byte = 0x09
	comPing            byte = 0x0e
	comChangeUser      byte = 0x11
	comStmtPrepare     byte = 0x16
	comStmtExecute     byte = 0x17
	comStmtSendLong    byte = 0x18
	comStmtClose       byte = 0x19
	comStmtReset       byte = 0x1a
	comSetOption       byte = 0x1b
	comStmtFetch       byte = 0x1c
	comResetConnection byte = 0x1f
)

// Packet headers.
const (
	headerOK  byte = 0x00
	headerEOF byte = 0xfe
	headerErr byte = 0xff
)

const (
	nativePassword      = "mysql_native_password"
	cachingSHA2Password = "caching_sha2_password"
	clearPassword       = "mysql_clear_password"
)

// packetConn reads and writes a connection's packets. Writes are buffered: queue adds a packet,
// flush sends what is queued, writePacket does both. A relayed answer is queued packet by packet
// and flushed once, so a result of five packets costs the client's socket one write, not five.
type packetConn struct {
	r *bufio.Reader
	w *bufio.Writer
}

func newPacketConn(rw io.ReadWriter) *packetConn {
	return &packetConn{r: bufio.NewReaderSize(rw, 16<<10), w: bufio.NewWriterSize(rw, 16<<10)}
}

// readPacket reads one packet as sent: a payload of maxPayload bytes is continued by the next.
func (c *packetConn) readPacket() (seq byte, payload []byte, err error) {
	var h [4]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		return 0, nil, err
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	payload = make([]byte, n)
	if _, err := io.ReadFull(c.r, payload); err != nil {
		return 0, nil, err
	}
	return h[3], payload, nil
}

// queue adds one packet to what the next flush sends; payload must not exceed maxPayload.
func (c *packetConn) queue(seq byte, payload []byte) error {
	h := [4]byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), seq}
	if _, err := c.w.Write(h[:]); err != nil {
		return err
	}
	_, err := c.w.Write(payload)
	return err
}

func (c *packetConn) flush() error { return c.w.Flush() }

// writePacket sends one packet, with whatever was queued before it.
func (c *packetConn) writePacket(seq byte, payload []byte) error {
	if err := c.queue(seq, payload); err != nil {
		return err
	}
	return c.flush()
}

// lenenc reads a length-encoded integer at the start of b and returns it with its size.
func lenenc(b []byte) (v uint64, n int, err error) {
	if len(b) == 0 {
		return 0, 0, errors.New("a length-encoded integer is missing")
	}
	size := map[byte]int{0xfc: 3, 0xfd: 4, 0xfe: 9}[b[0]]
	switch {
	case b[0] < 0xfb:
		return uint64(b[0]), 1, nil
	case size == 0:
		return 0, 0, fmt.Errorf("0x%02x is no length-encoded integer", b[0])
	case len(b) < size:
		return 0, 0, errors.New("a length-encoded integer is cut short")
	}
	var buf [8]byte
	copy(buf[:], b[1:size])
	return binary.LittleEndian.Uint64(buf[:]), size, nil
}

func appendLenenc(b []byte, v uint64) []byte {
	switch {
	case v < 0xfb:
		return append(b, byte(v))
	case v < 1<<16:
		return append(b, 0xfc, byte(v), byte(v>>8))
	case v < 1<<24:
		return append(b, 0xfd, byte(v), byte(v>>8), byte(v>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), v)
}

// isEOF tells an EOF packet from a row that starts with 0xfe (a length of 8 bytes, so at least 9).
func isEOF(p []byte) bool { return len(p) > 0 && p[0] == headerEOF && len(p) < 9 }

// okStatus is an OK packet's status flags.
func okStatus(p []byte) (uint16, error) {
	rest := p[1:]
	for range 2 { // affected rows, last insert id
		_, n, err := lenenc(rest)
		if err != nil {
			return 0, fmt.Errorf("an OK packet: %w", err)
		}
		rest = rest[n:]
	}
	if len(rest) < 2 {
		return 0, errors.New("an OK packet without its status")
	}
	return binary.LittleEndian.Uint16(rest), nil
}

// eofStatus is an EOF packet's status flags (after its warnings).
func eofStatus(p []byte) uint16 {
	if len(p) < 5 {
		return 0
	}
	return binary.LittleEndian.Uint16(p[3:])
}

// errPacket is an ERR packet with a MySQL error code, SQL state and message.
func errPacket(code uint16, state, message string) []byte {
	p := binary.LittleEndian.AppendUint16([]byte{headerErr}, code)
	p = append(append(p, '#'), state[:5]...)
	return append(p, message...)
}

// errMessage reads an ERR packet's code and message.
func errMessage(p []byte) string {
	if len(p) < 3 {
		return "an ERR packet cut short"
	}
	code, msg := binary.LittleEndian.Uint16(p[1:]), p[3:]
	if len(msg) > 6 && msg[0] == '#' {
		msg = msg[6:]
	}
	return fmt.Sprintf("%d %s", code, msg)
}

func okPacket(status uint16) []byte {
	return []byte{headerOK, 0, 0, byte(status), byte(status >> 8), 0, 0}
}

// handshake is a server's initial handshake (protocol 10).
type handshake struct {
	version      string
	connectionID uint32
	salt         []byte // 20 bytes
	capabilities uint32
	charset      byte
	status       uint16
	plugin       string
}

func (h handshake) encode() []byte {
	p := append([]byte{10}, h.version...)
	p = append(p, 0)
	p = binary.LittleEndian.AppendUint32(p, h.connectionID)
	p = append(append(p, h.salt[:8]...), 0)
	p = binary.LittleEndian.AppendUint16(p, uint16(h.capabilities))
	p = append(p, h.charset)
	p = binary.LittleEndian.AppendUint16(p, h.status)
	p = binary.LittleEndian.AppendUint16(p, uint16(h.capabilities>>16))
	p = append(p, byte(len(h.salt)+1))
	p = append(p, make([]byte, 10)...)
	p = append(append(p, h.salt[8:]...), 0)
	return append(append(p, h.plugin...), 0)
}

func parseHandshake(p []byte) (handshake, error) {
	var h handshake
	if len(p) == 0 || p[0] != 10 {
		if len(p) > 0 && p[0] == headerErr {
			return h, fmt.Errorf("the server refused the connection: %s", errMessage(p))
		}
		return h, errors.New("the server's greeting is not protocol 10")
	}
	end := bytes.IndexByte(p[1:], 0)
	if end < 0 || len(p) < 1+end+1+4+9+2 {
		return h, errors.New("the server's greeting is cut short")
	}
	h.version = string(p[1 : 1+end])
	rest := p[1+end+1:]
	h.connectionID = binary.LittleEndian.Uint32(rest)
	h.salt = append([]byte(nil), rest[4:12]...)
	rest = rest[13:]
	h.capabilities = uint32(binary.LittleEndian.Uint16(rest))
	if len(rest) < 2+1+2+2+1+10 {
		return h, errors.New("the server's greeting has no extended capabilities")
	}
	h.charset = rest[2]
	h.status = binary.LittleEndian.Uint16(rest[3:])
	h.capabilities |= uint32(binary.LittleEndian.Uint16(rest[5:])) << 16
	saltLen := int(rest[7])
	rest = rest[18:]
	if h.capabilities&capSecureConnection != 0 {
		n := max(13, saltLen-8)
		if len(rest) < n {
			return h, errors.New("the server's greeting is cut short in its salt")
		}
		h.salt = append(h.salt, bytes.TrimRight(rest[:n], "\x00")...)
		rest = rest[n:]
	}
	if h.capabilities&capPluginAuth != 0 {
		h.plugin = string(bytes.TrimRight(rest, "\x00"))
	}
	return h, nil
}

// handshakeResponse is a client's answer to the greeting (HandshakeResponse41).
type handshakeResponse struct {
	capabilities uint32
	charset      byte
	user         string
	auth         []byte
	database     string
	plugin       string
}

func (r handshakeResponse) encode() []byte {
	p := binary.LittleEndian.AppendUint32(nil, r.capabilities)
	p = binary.LittleEndian.AppendUint32(p, maxPayload)
	p = append(p, r.charset)
	p = append(p, make([]byte, 23)...)
	p = append(append(p, r.user...), 0)
	p = append(appendLenenc(p, uint64(len(r.auth))), r.auth...)
	if r.capabilities&capConnectWithDB != 0 {
		p = append(append(p, r.database...), 0)
	}
	return append(append(p, r.plugin...), 0)
}

// sslRequest is the head of a handshake response that asks for TLS before the rest.
func sslRequest(capabilities uint32, charset byte) []byte {
	p := binary.LittleEndian.AppendUint32(nil, capabilities|capSSL)
	p = binary.LittleEndian.AppendUint32(p, maxPayload)
	return append(append(p, charset), make([]byte, 23)...)
}

func parseHandshakeResponse(p []byte) (handshakeResponse, error) {
	var r handshakeResponse
	if len(p) < 32 {
		return r, errors.New("the client's handshake response is cut short")
	}
	r.capabilities = binary.LittleEndian.Uint32(p)
	if r.capabilities&capProtocol41 == 0 {
		return r, errors.New("the client does not speak protocol 4.1")
	}
	r.charset = p[8]
	rest := p[32:]
	end := bytes.IndexByte(rest, 0)
	if end < 0 {
		return r, errors.New("the client's handshake response has no user")
	}
	r.user, rest = string(rest[:end]), rest[end+1:]
	switch {
	case r.capabilities&capPluginAuthLenenc != 0:
		n, size, err := lenenc(rest)
		if err != nil || uint64(len(rest)-size) < n {
			return r, errors.New("the client's auth response is cut short")
		}
		r.auth, rest = rest[size:size+int(n)], rest[size+int(n):]
	case r.capabilities&capSecureConnection != 0:
		if len(rest) == 0 || len(rest) < 1+int(rest[0]) {
			return r, errors.New("the client's auth response is cut short")
		}
		r.auth, rest = rest[1:1+int(rest[0])], rest[1+int(rest[0]):]
	default:
		end := bytes.IndexByte(rest, 0)
		if end < 0 {
			return r, errors.New("the client's auth response is cut short")
		}
		r.auth, rest = rest[:end], rest[end+1:]
	}
	if r.capabilities&capConnectWithDB != 0 {
		end := bytes.IndexByte(rest, 0)
		if end < 0 {
			end = len(rest)
		}
		r.database, rest = string(rest[:end]), rest[min(end+1, len(rest)):]
	}
	if r.capabilities&capPluginAuth != 0 {
		if end := bytes.IndexByte(rest, 0); end >= 0 {
			r.plugin = string(rest[:end])
		} else {
			r.plugin = string(rest)
		}
	}
	return r, nil
}

// nativeScramble is mysql_native_password's answer to a salt: SHA1(password) XOR
// SHA1(salt + SHA1(SHA1(password))).
func nativeScramble(salt []byte, password string) []byte {
	if password == "" {
		return nil
	}
	stage1 := sha1.Sum([]byte(password)) //nolint:gosec // the protocol's hash
	stage2 := sha1.Sum(stage1[:])        //nolint:gosec
	h := sha1.New()                      //nolint:gosec
	h.Write(salt[:20])
	h.Write(stage2[:])
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= stage1[i]
	}
	return out
}

// sha2Scramble is caching_sha2_password's fast answer: SHA256(password) XOR
// SHA256(SHA256(SHA256(password)) + salt).
func sha2Scramble(salt []byte, password string) []byte {
	if password == "" {
		return nil
	}
	a := sha256.Sum256([]byte(password))
	b := sha256.Sum256(a[:])
	h := sha256.New()
	h.Write(b[:])
	h.Write(salt[:20])
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= a[i]
	}
	return out
}
