// Package transport turns a resolved server and a transport spec into the libpq settings, volumes
// and mounts a runner pod needs to reach the server along that path. Each transport type lives in
// its own file; adding a type (ssh, pooler) means adding a builder here and a case in For.
package transport
