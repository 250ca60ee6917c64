package openvpn

import (
	"net/netip"
	"strings"
	"testing"
)

func TestApplyLogLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Counters
	}{
		{"Initialization Sequence Completed", Counters{Up: true}},
		{"Data Channel: cipher 'CHACHA20-POLY1305', peer-id: 0", Counters{DataCipher: "CHACHA20-POLY1305"}},
		{"client/10.88.0.7:41234 Data Channel: cipher 'AES-256-GCM', peer-id: 3", Counters{DataCipher: "AES-256-GCM"}},
		{"Control Channel: TLSv1.3, cipher TLSv1.3 TLS_AES_256_GCM_SHA384, peer certificate: 256 bits ECsecp256r1, signature: ecdsa-with-SHA256",
			Counters{ControlChannel: "TLSv1.3 TLS_AES_256_GCM_SHA384"}},
		{"Control Channel: TLSv1.2, cipher TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384, peer certificate: 256 bits",
			Counters{ControlChannel: "TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384"}},
		{"TUN/TAP device tun0 opened", Counters{}},
	} {
		var got Counters
		applyLogLine(&got, tc.line)
		if got != tc.want {
			t.Errorf("%q: got %+v, want %+v", tc.line, got, tc.want)
		}
	}
}

func TestApplyStatus(t *testing.T) {
	status := "OpenVPN STATISTICS\nUpdated,2026-11-27 11:00:00\nTUN/TAP read bytes,100\nTUN/TAP write bytes,200\n" +
		"TCP/UDP read bytes,300\nTCP/UDP write bytes,400\nAuth read bytes,250\npre-compress bytes,0\n"
	var got Counters
	applyStatus(&got, status)
	want := Counters{TunRead: 100, TunWrite: 200, LinkRead: 300, LinkWrite: 400}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestNetmask(t *testing.T) {
	for prefix, want := range map[string]string{"10.202.0.0/24": "255.255.255.0", "10.0.0.0/8": "255.0.0.0",
		"10.202.0.0/20": "255.255.240.0", "0.0.0.0/0": "0.0.0.0", "10.202.0.1/32": "255.255.255.255"} {
		if got := netmask(netip.MustParsePrefix(prefix)); got != want {
			t.Errorf("netmask(%s) = %s, want %s", prefix, got, want)
		}
	}
}

// TestConfigPinsAndSeparatesTheEnds: the client pins the gateway's name and checks it is a
// server; the gateway checks clients and serves the tunnel's subnet; each names only its own key.
func TestConfigPinsAndSeparatesTheEnds(t *testing.T) {
	gw := End{Gateway: true, KeyDir: "/k", GatewayName: "gw", RunDir: "/r"}.Config()
	cl := End{KeyDir: "/k", Remote: "gw.ns.svc:1194", GatewayName: "gw", RunDir: "/r"}.Config()
	for _, tc := range []struct {
		conf, want string
		has        bool
	}{
		{gw, "server 10.202.0.0 255.255.255.0\n", true},
		{gw, "key /k/gateway.key\n", true},
		{gw, "client.key", false},
		{gw, "remote-cert-tls client\n", true},
		{cl, "remote gw.ns.svc 1194 udp\n", true},
		{cl, "verify-x509-name gw name\n", true},
		{cl, "remote-cert-tls server\n", true},
		{cl, "gateway.key", false},
		{cl, "management /r/management.sock unix\n", true},
	} {
		if strings.Contains(tc.conf, tc.want) != tc.has {
			t.Errorf("configuration has %q: %v, want %v:\n%s", tc.want, !tc.has, tc.has, tc.conf)
		}
	}
}
