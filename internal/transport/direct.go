package transport

// direct is plain TCP. sslmode=disable is stated explicitly: libpq's default (prefer) would use
// TLS whenever the server offers it, and the baseline would silently measure TLS.
func direct(server Server) Connection {
	return base(server, "disable")
}
