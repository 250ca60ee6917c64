package transport_test

// The transport package's tests run with every transport type linked, as the operator links them:
// the shared rules word their refusals from what every registered type can do (a pooler may run
// over "proxy, ssh or vpn"), and the types in their own packages register only when linked.
import _ "github.com/tunnelbench/tunnelbench/internal/transport/transports"
