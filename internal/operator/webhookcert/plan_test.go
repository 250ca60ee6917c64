package webhookcert

import (
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"
)

var hosts = []string{"tb-webhook.tb-system.svc", "tb-webhook.tb-system.svc.cluster.local"}

func decide(t *testing.T, data map[string][]byte, hosts []string, now time.Time) Plan {
	t.Helper()
	plan, err := Decide(data, hosts, now, DefaultValidity)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

func parse(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("no PEM in %q", b)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDecideLifecycle follows one Secret through its life: made from nothing, left alone while
// valid, the server certificate renewed within RenewBefore of its end, the CA renewed with the
// old one kept in the bundle until it expires, and then dropped.
func TestDecideLifecycle(t *testing.T) {
	now := time.Now()
	first := decide(t, nil, hosts, now)
	if first.Data == nil || !strings.Contains(first.Why, "none yet") {
		t.Fatalf("nothing made from an empty Secret: %+v", first)
	}
	ca, cert := parse(t, first.Data[CAKey]), parse(t, first.Data[CertKey])
	if err := cert.CheckSignatureFrom(ca); err != nil {
		t.Fatalf("the server certificate is not the CA's: %v", err)
	}
	if err := cert.VerifyHostname(hosts[0]); err != nil {
		t.Errorf("the server certificate does not name %s: %v", hosts[0], err)
	}
	if again := decide(t, first.Data, hosts, now.Add(time.Hour)); again.Data != nil {
		t.Fatalf("a valid Secret rewritten: %s", again.Why)
	}

	// 61 days on, the 90-day certificate is within 30 days of its end: renewed under the same CA.
	renewed := decide(t, first.Data, hosts, now.Add(61*24*time.Hour))
	if renewed.Data == nil || string(renewed.Data[CAKey]) != string(first.Data[CAKey]) ||
		string(renewed.Data[CertKey]) == string(first.Data[CertKey]) {
		t.Fatalf("want the server certificate renewed under the same CA, got %q", renewed.Why)
	}

	// 336 days on, the one-year CA is within 30 days of its end: a new CA and certificate, the old
	// CA kept in the bundle while it is valid.
	rotated := decide(t, first.Data, hosts, now.Add(336*24*time.Hour))
	if rotated.Data == nil || string(rotated.Data[CAKey]) == string(first.Data[CAKey]) {
		t.Fatalf("want the CA renewed, got %q", rotated.Why)
	}
	if string(rotated.Data[PreviousCAKey]) != string(first.Data[CAKey]) {
		t.Errorf("the old CA is not kept as %s", PreviousCAKey)
	}
	if err := parse(t, rotated.Data[CertKey]).CheckSignatureFrom(parse(t, rotated.Data[CAKey])); err != nil {
		t.Errorf("the server certificate is not the new CA's: %v", err)
	}
	bundle := string(Bundle(rotated.Data))
	if !strings.Contains(bundle, string(first.Data[CAKey])) || !strings.Contains(bundle, string(rotated.Data[CAKey])) {
		t.Errorf("the bundle lacks one of the two CAs")
	}

	// Once the old CA expired, it leaves the bundle.
	dropped := decide(t, rotated.Data, hosts, now.Add(366*24*time.Hour))
	if dropped.Data == nil || len(dropped.Data[PreviousCAKey]) != 0 {
		t.Errorf("the expired previous CA stays: %q", dropped.Why)
	}
}

// TestDecideRenewsWhatIsWrong: a certificate for other hosts, of another CA, or unreadable data
// is renewed, and says why.
func TestDecideRenewsWhatIsWrong(t *testing.T) {
	now := time.Now()
	good := decide(t, nil, hosts, now).Data
	other := decide(t, nil, hosts, now).Data
	tests := []struct {
		name  string
		data  map[string][]byte
		hosts []string
		want  string
	}{
		{"other hosts", good, []string{"renamed.tb-system.svc"}, "names"},
		{"another CA's certificate", map[string][]byte{CAKey: good[CAKey], CAPrivateKey: good[CAPrivateKey],
			CertKey: other[CertKey], KeyKey: other[KeyKey]}, hosts, "not signed by the CA"},
		{"a key that is not the certificate's", map[string][]byte{CAKey: good[CAKey], CAPrivateKey: good[CAPrivateKey],
			CertKey: good[CertKey], KeyKey: other[KeyKey]}, hosts, "not the certificate's"},
		{"garbage CA", map[string][]byte{CAKey: []byte("x"), CAPrivateKey: []byte("y")}, hosts, "unreadable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := decide(t, tt.data, tt.hosts, now)
			if plan.Data == nil || !strings.Contains(plan.Why, tt.want) {
				t.Fatalf("want a renewal for %q, got %+v", tt.want, plan.Why)
			}
			if err := parse(t, plan.Data[CertKey]).VerifyHostname(tt.hosts[0]); err != nil {
				t.Errorf("the new certificate does not name %s", tt.hosts[0])
			}
		})
	}
}
