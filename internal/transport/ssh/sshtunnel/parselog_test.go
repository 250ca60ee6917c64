package sshtunnel

import (
	"strings"
	"testing"
)

// A log in the shape OpenSSH 9.2's `ssh -v -E file` writes.
const sampleLog = `OpenSSH_9.2p1 Debian-2+deb12u3, OpenSSL 3.0.15 3 Sep 2024
debug1: Reading configuration data /etc/ssh/ssh_config
debug1: Connecting to gw.db.svc [10.96.0.12] port 2222.
debug1: Connection established.
debug1: Local version string SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3
debug1: Remote protocol version 2.0, remote software version OpenSSH_9.2p1 Debian-2+deb12u2
debug1: compat_banner: match: OpenSSH_9.2p1 Debian-2+deb12u2 pat OpenSSH* compat 0x04000000
debug1: kex: algorithm: sntrup761x25519-sha512@openssh.com
debug1: kex: client->server cipher: aes128-ctr MAC: hmac-sha2-256-etm@openssh.com compression: zlib@openssh.com
debug1: kex: server->client cipher: aes128-ctr MAC: hmac-sha2-256-etm@openssh.com compression: zlib@openssh.com
debug1: Authenticated to gw.db.svc ([10.96.0.12]:2222) using "publickey".
debug1: Local connections to LOCALHOST:15432 forwarded to remote address pg-rw:5432
`

func TestParseLog(t *testing.T) {
	neg, lastError := ParseLog(sampleLog)
	want := Negotiated{Cipher: "aes128-ctr", MAC: "hmac-sha2-256-etm@openssh.com", Compression: "zlib@openssh.com",
		ClientVersion: "OpenSSH_9.2p1 Debian-2+deb12u3", ServerVersion: "OpenSSH_9.2p1 Debian-2+deb12u2"}
	if neg == nil || *neg != want || lastError != "" {
		t.Errorf("ParseLog = %+v, %q; want %+v", neg, lastError, want)
	}
	if neg, _ := ParseLog("debug1: Local version string SSH-2.0-OpenSSH_9.2p1\n"); neg != nil {
		t.Errorf("no key exchange, nothing negotiated: %+v", neg)
	}
	_, lastError = ParseLog(sampleLog + "debug1: Connection closed by 10.96.0.12 port 2222\n")
	if lastError != "Connection closed by 10.96.0.12 port 2222" {
		t.Errorf("last error %q", lastError)
	}
	// Refused tries (ConnectAttempts) before the connection that stands are no error.
	refusedFirst := strings.Replace(sampleLog, "debug1: Connecting to", "debug1: Connecting to gw.db.svc [10.96.0.12] port 2222.\n"+
		"debug1: connect to address 10.96.0.12 port 2222: Connection refused\ndebug1: Connecting to", 1)
	if _, lastError = ParseLog(refusedFirst); lastError != "" {
		t.Errorf("a refused try before the connection: last error %q, want none", lastError)
	}
	refused := "debug1: Connecting to gw.db.svc [10.96.0.12] port 2222.\n" +
		"debug1: connect to address 10.96.0.12 port 2222: Connection refused\n" +
		"ssh: connect to host gw.db.svc port 2222: Connection refused\n"
	if _, lastError = ParseLog(refused); lastError != "ssh: connect to host gw.db.svc port 2222: Connection refused" {
		t.Errorf("every try refused: last error %q", lastError)
	}
}

// TestSessions: ssh appends to its -E file, so a tunnel whose sidecar the kubelet restarted logs
// two sessions (a SIGKILLed ssh writes nothing more).
func TestSessions(t *testing.T) {
	for _, tt := range []struct {
		name string
		log  string
		want int
	}{
		{"none yet", "", 0},
		{"one ssh", sampleLog, 1},
		{"restarted once", sampleLog + sampleLog, 2},
	} {
		if got := Sessions(tt.log); got != tt.want {
			t.Errorf("%s: %d sessions, want %d", tt.name, got, tt.want)
		}
	}
}
