// Package sshtunnel renders the command lines of the SSH tunnel transport: the hardened, non-root
// sshd of the gateway next to the server, and the `ssh -L` of each tunnel next to the client.
// It also reads back, from ssh's own verbose log, what was negotiated and why a tunnel died.
package sshtunnel

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// GatewayPort is the unprivileged port sshd listens on.
const GatewayPort = 2222

// DefaultUser is the account sshd runs as in the image and the tunnels log in as: a non-root
// sshd can only admit its own user.
const DefaultUser = "tunnelbench"

// Ciphers are the ciphers of OpenSSH 9 a tunnel may use; the gateway accepts all of them.
var Ciphers = []string{
	"chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com",
	"aes128-ctr", "aes192-ctr", "aes256-ctr",
}

// MACs are the MACs a tunnel with a non-AEAD cipher may use.
var MACs = []string{
	"hmac-sha2-256-etm@openssh.com", "hmac-sha2-512-etm@openssh.com", "umac-128-etm@openssh.com",
	"hmac-sha2-256", "hmac-sha2-512", "umac-128@openssh.com",
}

// Gateway describes the sshd next to the server.
type Gateway struct {
	// HostKeyFile and AuthorizedKeysFile are the mounted key material.
	HostKeyFile        string
	AuthorizedKeysFile string
	// PermitOpen is the only destination ("host:port") a tunnel may forward to.
	PermitOpen string
	// ListenAddress is where sshd listens; empty means every address.
	ListenAddress string
	Port          int
	// User is the only account admitted; DefaultUser when empty.
	User string
}

func userOr(u string) string {
	if u == "" {
		return DefaultUser
	}
	return u
}

// SSHDArgs returns sshd's arguments. The whole configuration is on the command line (with an empty
// config file), so that what runs is what the pod spec shows: keys only, no command but
// ForceCommand, no PTY, no agent, X11, remote or stream-local forwarding, and local forwarding
// only to PermitOpen.
func (g Gateway) SSHDArgs() []string {
	listen := g.ListenAddress
	if listen == "" {
		listen = "0.0.0.0"
	}
	opts := []string{
		"Port=" + strconv.Itoa(g.Port),
		"ListenAddress=" + listen,
		"HostKey=" + g.HostKeyFile,
		"AuthorizedKeysFile=" + g.AuthorizedKeysFile,
		// Secret volumes are root-owned: sshd running as a user would refuse them.
		"StrictModes=no",
		"PidFile=none",
		"UsePAM=no",
		"PubkeyAuthentication=yes",
		"PasswordAuthentication=no",
		"KbdInteractiveAuthentication=no",
		"PermitRootLogin=no",
		"AllowUsers=" + userOr(g.User),
		"AllowTcpForwarding=local",
		"PermitOpen=" + g.PermitOpen,
		"AllowAgentForwarding=no",
		"AllowStreamLocalForwarding=no",
		"X11Forwarding=no",
		"PermitTTY=no",
		"PermitTunnel=no",
		"GatewayPorts=no",
		"PermitUserRC=no",
		// Whatever the client asks to run, it gets this: a wait for its own connection to end
		// (tail exits once the sshd process of the connection, its parent, is gone). A session
		// matters: sshd sets TCP_NODELAY on the connection only when it starts one, and without
		// it Nagle's algorithm holds sshd's replies for an ACK, a round trip on a WAN (ssh -N
		// reached 0.60 of the RTT bound, a session 0.93: hack/bench/sshwan).
		"ForceCommand=" + ForceCommand,
		"Compression=yes",
		"Ciphers=" + strings.Join(Ciphers, ","),
		"MACs=" + strings.Join(MACs, ","),
		"ClientAliveInterval=15",
		"ClientAliveCountMax=3",
		"LogLevel=VERBOSE",
	}
	args := []string{"-D", "-e", "-f", "/dev/null"}
	for _, o := range opts {
		args = append(args, "-o", o)
	}
	return args
}

// Tunnel describes one client-side tunnel.
type Tunnel struct {
	// Gateway is the sshd's host name and Port its port.
	Gateway string
	Port    int
	// HostKeyAlias, when set, is the known_hosts name the gateway's key is checked under instead
	// of Gateway:Port: the gateway's own name when ssh dials it through the link proxy.
	HostKeyAlias string
	// LocalPort is the loopback port the tunnel listens on; Target the "host:port" it forwards to.
	LocalPort int
	Target    string
	// IdentityFile and KnownHostsFile are the mounted client key and pinned host key.
	IdentityFile   string
	KnownHostsFile string
	// LogFile receives ssh's verbose log, read back by the runner.
	LogFile     string
	Compression bool
	Cipher      string
	MAC         string
	KeepAlive   time.Duration
	// User logs in; DefaultUser when empty.
	User string
}

// ForceCommand is the only command the gateway runs, through its user's shell: it does nothing
// until the connection that started it ends.
const ForceCommand = `exec /usr/bin/tail -f --pid="$PPID" /dev/null`

// SSHArgs returns ssh's arguments: a session without a command (the gateway runs ForceCommand, so
// that sshd disables Nagle's algorithm on the connection), stdin from /dev/null, no TTY, batch
// mode, the host key pinned (StrictHostKeyChecking yes against the generated known_hosts), and an
// exit when the forward
// cannot be set up, so that a broken tunnel fails instead of running half-open. A refused
// connection is tried again, once a second for ConnectAttempts seconds: the gateway is up before
// the runner pod exists, but a NetworkPolicy implementation admits a new pod's address only once
// it has seen it (a second or two after the pod starts in the local cluster's kube-router).
func (t Tunnel) SSHArgs() []string {
	// At least a second: ServerAliveInterval=0 would turn the keep-alive off, and a dead tunnel
	// would go unnoticed (the API's default and minimum make this a guard only).
	keepAlive := max(t.KeepAlive, time.Second)
	args := []string{
		"-n", "-T", "-v",
		"-p", strconv.Itoa(t.Port),
		"-L", fmt.Sprintf("127.0.0.1:%d:%s", t.LocalPort, t.Target),
		"-i", t.IdentityFile,
		"-o", "IdentitiesOnly=yes",
		"-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=yes",
		"-o", "UserKnownHostsFile=" + t.KnownHostsFile,
		"-o", "GlobalKnownHostsFile=/dev/null",
		"-o", "UpdateHostKeys=no",
		"-o", "ExitOnForwardFailure=yes",
		"-o", "ServerAliveInterval=" + strconv.Itoa(int(keepAlive.Seconds())),
		"-o", "ServerAliveCountMax=3",
		"-o", "ConnectTimeout=10",
		"-o", "ConnectionAttempts=" + strconv.Itoa(ConnectAttempts),
	}
	if t.Compression {
		args = append(args, "-o", "Compression=yes")
	} else {
		args = append(args, "-o", "Compression=no")
	}
	if t.HostKeyAlias != "" {
		args = append(args, "-o", "HostKeyAlias="+t.HostKeyAlias)
	}
	if t.Cipher != "" {
		args = append(args, "-c", t.Cipher)
	}
	if t.MAC != "" {
		args = append(args, "-m", t.MAC)
	}
	if t.LogFile != "" {
		args = append(args, "-E", t.LogFile)
	}
	return append(args, userOr(t.User)+"@"+t.Gateway)
}

// Negotiated is what ssh agreed on with the gateway, as ssh itself logged it.
type Negotiated struct {
	Cipher      string `json:"cipher"`
	MAC         string `json:"mac"`
	Compression string `json:"compression"`
	// ClientVersion and ServerVersion are the software versions of ssh and of the gateway's sshd
	// as they announced themselves in the protocol's version exchange.
	ClientVersion string `json:"clientVersion,omitempty"`
	ServerVersion string `json:"serverVersion,omitempty"`
}

// ConnectAttempts is how many times ssh tries to connect to the gateway, a second apart.
const ConnectAttempts = 30

// sessionMark starts every ssh -v session's log: ssh appends to its -E file, so a tunnel whose ssh
// was restarted (its sidecar killed, and started again by the kubelet) has two.
const sessionMark = "debug1: Local version string "

// Sessions counts the ssh processes that wrote the log.
func Sessions(log string) int { return strings.Count(log, sessionMark) }

// ParseLog reads ssh's -v log: the client->server algorithms it negotiated and the last line that
// explains a failure or the end of the session ("" when none: the tunnel is up).
func ParseLog(log string) (neg *Negotiated, lastError string) {
	sc := bufio.NewScanner(strings.NewReader(log))
	var client, server string
	for sc.Scan() {
		line := sc.Text()
		// debug1: kex: client->server cipher: aes128-ctr MAC: hmac-sha2-256-etm@openssh.com compression: none
		if rest, ok := strings.CutPrefix(line, "debug1: kex: client->server cipher: "); ok {
			f := strings.Fields(rest)
			if len(f) >= 5 && f[1] == "MAC:" && f[3] == "compression:" {
				neg = &Negotiated{Cipher: f[0], MAC: f[2], Compression: f[4]}
			}
			continue
		}
		// debug1: Local version string SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3
		if rest, ok := strings.CutPrefix(line, sessionMark+"SSH-2.0-"); ok {
			client = strings.TrimSpace(rest)
			continue
		}
		// debug1: Remote protocol version 2.0, remote software version OpenSSH_9.2p1 Debian-2+deb12u3
		if _, rest, ok := strings.Cut(line, "remote software version "); ok && strings.HasPrefix(line, "debug1: Remote protocol") {
			server = strings.TrimSpace(rest)
			continue
		}
		switch {
		case line == connectedMark:
			// Refused tries before it are over (ConnectAttempts).
			lastError = ""
		case strings.HasPrefix(line, "Transferred: sent"):
			// ssh logs its byte counts when its session ends, also when it was stopped cleanly.
			lastError = "the ssh session ended (" + line + ")"
		case isFailure(line):
			lastError = strings.TrimPrefix(line, "debug1: ")
		}
	}
	if neg != nil {
		neg.ClientVersion, neg.ServerVersion = client, server
	}
	return neg, lastError
}

const connectedMark = "debug1: Connection established."

var failureMarks = []string{
	"Host key verification failed", "REMOTE HOST IDENTIFICATION HAS CHANGED", "Permission denied",
	"Connection refused", "Connection timed out", "Could not resolve hostname", "No route to host",
	"Timeout, server", "not responding", "Connection closed", "Connection reset", "Broken pipe",
	"administratively prohibited", "open failed", "Could not request local forwarding",
	"cannot listen to port", "Killed by signal",
}

func isFailure(line string) bool {
	for _, m := range failureMarks {
		if strings.Contains(line, m) {
			return true
		}
	}
	return false
}
