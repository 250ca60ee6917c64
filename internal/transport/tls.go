package transport

import (
	corev1 "k8s.io/api/core/v1"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// tlsConnection is TCP with TLS. The server's CA is mounted only for the verifying modes: with a
// root certificate present, libpq's sslmode=require quietly behaves like verify-ca.
func tlsConnection(server Server, t benchv1.TransportSpec, issuedClientCert string) Connection {
	mode := t.EffectiveSSLMode()
	c := base(server, string(mode))
	if mode != benchv1.SSLModeRequire && server.CASecret != "" {
		c.Volumes = append(c.Volumes, secretVolume("server-ca", server.CASecret,
			corev1.KeyToPath{Key: server.CAKey, Path: "ca.crt"}))
		c.Mounts = append(c.Mounts, corev1.VolumeMount{Name: "server-ca", MountPath: CADir, ReadOnly: true})
		c.Env = append(c.Env, corev1.EnvVar{Name: "PGSSLROOTCERT", Value: CADir + "/ca.crt"})
	}
	clientCert := ""
	switch {
	case t.TLS != nil && t.TLS.ClientCertSecret != nil:
		clientCert = t.TLS.ClientCertSecret.Name
	case t.TLS != nil && t.TLS.ClientCertificate != nil:
		clientCert = issuedClientCert
	}
	if clientCert != "" {
		c.Volumes = append(c.Volumes, secretVolume("client-cert", clientCert,
			corev1.KeyToPath{Key: corev1.TLSCertKey, Path: "tls.crt"},
			corev1.KeyToPath{Key: corev1.TLSPrivateKeyKey, Path: "tls.key"}))
		c.Mounts = append(c.Mounts, corev1.VolumeMount{Name: "client-cert", MountPath: ClientCertDir, ReadOnly: true})
		c.Env = append(c.Env,
			corev1.EnvVar{Name: "PGSSLCERT", Value: ClientCertDir + "/tls.crt"},
			corev1.EnvVar{Name: "PGSSLKEY", Value: ClientCertDir + "/tls.key"})
	}
	return c
}
