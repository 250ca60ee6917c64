// Package webhookcert keeps the serving certificate of the operator's admission webhook when no
// cert-manager issues it, as CloudNativePG does for its own: a CA and a server certificate kept in
// a Secret of the operator's namespace, written to the directory the webhook server reloads them
// from, and the CA put in the webhook configurations' caBundles; both are renewed before
// they expire, the old CA staying in the bundle until it expires so that no request fails while
// the API server learns the new one.
//
// Plan decides from the Secret's content and the clock alone (pure, tested without an API server);
// Rotator reads, writes and patches.
package webhookcert

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/tunnelbench/tunnelbench/internal/transport/pki"
)

// Keys of the Secret. tls.crt and tls.key are a kubernetes.io/tls Secret's, which is also what
// cert-manager writes, so that the webhook server reads either the same way.
const (
	CAKey         = "ca.crt"
	CAPrivateKey  = "ca.key"
	PreviousCAKey = "ca-previous.crt"
	CertKey       = "tls.crt"
	KeyKey        = "tls.key"
)

// Validity are the lifetimes of what the Rotator makes, and how long before the end it renews.
type Validity struct {
	CA, Cert, RenewBefore time.Duration
}

// DefaultValidity renews a 90-day server certificate 30 days early, and a one-year CA as well.
var DefaultValidity = Validity{CA: 365 * 24 * time.Hour, Cert: 90 * 24 * time.Hour, RenewBefore: 30 * 24 * time.Hour}

// Plan is what one pass must write.
type Plan struct {
	// Data is the Secret's new content; nil when it stays as it is.
	Data map[string][]byte
	// Why says what was renewed, for the log.
	Why string
}

// Decide reads the Secret's data (nil when there is none) and says what to write at now for a
// server certificate that names hosts: a new CA when it is missing, unreadable or within
// RenewBefore of its end (the old one kept as PreviousCAKey while it is still valid), and a new
// server certificate when the CA changed, or it is missing, unreadable, not the CA's, within
// RenewBefore of its end, or names other hosts.
func Decide(data map[string][]byte, hosts []string, now time.Time, v Validity) (Plan, error) {
	ca, caProblem := readCA(data, now, v.RenewBefore)
	out := map[string][]byte{}
	var why []string
	if caProblem != "" {
		fresh, err := pki.NewCA("tunnelbench-webhook-ca", v.CA)
		if err != nil {
			return Plan{}, err
		}
		if ca != nil && now.Before(ca.Cert.NotAfter) {
			out[PreviousCAKey] = ca.CertPEM
		}
		ca = fresh
		out[CAKey], out[CAPrivateKey] = ca.CertPEM, ca.KeyPEM
		why = append(why, "CA: "+caProblem)
	} else if prev := data[PreviousCAKey]; len(prev) > 0 && validPEM(prev, now) {
		out[PreviousCAKey] = prev
	}
	certProblem := "the CA was renewed"
	if caProblem == "" {
		certProblem = readCert(data, ca, hosts, now, v.RenewBefore)
	}
	if certProblem != "" {
		cert, err := ca.Issue(hosts[0], hosts, v.Cert)
		if err != nil {
			return Plan{}, err
		}
		out[CertKey], out[KeyKey] = cert.CertPEM, cert.KeyPEM
		why = append(why, "server certificate: "+certProblem)
	}
	if len(why) == 0 {
		if _, had := data[PreviousCAKey]; had && out[PreviousCAKey] == nil {
			why = append(why, "the previous CA expired")
		} else {
			return Plan{}, nil
		}
	}
	for _, k := range []string{CAKey, CAPrivateKey, CertKey, KeyKey} {
		if out[k] == nil {
			out[k] = data[k]
		}
	}
	return Plan{Data: out, Why: fmt.Sprint(why)}, nil
}

// Bundle is the caBundle of the webhook: the CA, and the previous one while it is valid.
func Bundle(data map[string][]byte) []byte {
	return append(append([]byte{}, data[CAKey]...), data[PreviousCAKey]...)
}

// readCA parses the stored CA; the problem says why it must be renewed ("" when it need not).
func readCA(data map[string][]byte, now time.Time, renewBefore time.Duration) (*pki.KeyPair, string) {
	if len(data[CAKey]) == 0 || len(data[CAPrivateKey]) == 0 {
		return nil, "none yet"
	}
	ca, err := pki.Parse(data[CAKey], data[CAPrivateKey])
	switch {
	case err != nil:
		return nil, "unreadable: " + err.Error()
	case !ca.Cert.IsCA:
		return ca, "not a CA"
	case now.Add(renewBefore).After(ca.Cert.NotAfter):
		return ca, fmt.Sprintf("ends %s", ca.Cert.NotAfter.Format(time.RFC3339))
	}
	return ca, ""
}

// readCert says why the stored server certificate must be renewed ("" when it need not).
func readCert(data map[string][]byte, ca *pki.KeyPair, hosts []string, now time.Time, renewBefore time.Duration) string {
	if len(data[CertKey]) == 0 || len(data[KeyKey]) == 0 {
		return "none yet"
	}
	cert, err := pki.Parse(data[CertKey], data[KeyKey])
	switch {
	case err != nil:
		return "unreadable: " + err.Error()
	case cert.Cert.CheckSignatureFrom(ca.Cert) != nil:
		return "not signed by the CA"
	case now.Add(renewBefore).After(cert.Cert.NotAfter):
		return fmt.Sprintf("ends %s", cert.Cert.NotAfter.Format(time.RFC3339))
	case !slices.Equal(namesOf(cert.Cert), hosts):
		return fmt.Sprintf("names %v, not %v", namesOf(cert.Cert), hosts)
	}
	return ""
}

// namesOf are a certificate's DNS names and then its IP addresses, in the order Issue wrote them.
func namesOf(c *x509.Certificate) []string {
	names := slices.Clone(c.DNSNames)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	return names
}

// SortHosts orders hosts as a certificate lists them: DNS names first, then IP addresses.
func SortHosts(hosts []string) []string {
	var names, ips []string
	for _, h := range hosts {
		if net.ParseIP(h) != nil {
			ips = append(ips, h)
		} else {
			names = append(names, h)
		}
	}
	return append(names, ips...)
}

// validPEM reports whether the first certificate of b is still valid at now.
func validPEM(b []byte, now time.Time) bool {
	block, _ := pem.Decode(bytes.TrimSpace(b))
	if block == nil {
		return false
	}
	c, err := x509.ParseCertificate(block.Bytes)
	return err == nil && now.Before(c.NotAfter)
}
