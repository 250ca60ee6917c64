package sshtunnel

import (
	"strings"
	"testing"
)

// FuzzParseLog: ssh's log is read whatever it holds; a negotiation, when found, has every field,
// and the reported error is one of the log's lines.
func FuzzParseLog(f *testing.F) {
	f.Add("debug1: kex: client->server cipher: aes128-ctr MAC: hmac-sha2-256-etm@openssh.com compression: none\n")
	f.Add("debug1: Local version string SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\n" +
		"debug1: Remote protocol version 2.0, remote software version OpenSSH_9.2p1 Debian-2+deb12u3\n" +
		"channel 2: open failed: administratively prohibited: open failed\n")
	f.Add("Connection closed by 10.0.0.1 port 22\r\n")
	f.Fuzz(func(t *testing.T, log string) {
		neg, lastError := ParseLog(log)
		if neg != nil && (neg.Cipher == "" || neg.MAC == "" || neg.Compression == "") {
			t.Fatalf("a partial negotiation %+v", neg)
		}
		if lastError != "" && !strings.Contains(log, strings.TrimSpace(lastError)) {
			t.Fatalf("the error %q is not in the log", lastError)
		}
	})
}
