package transport_test

// The transport package's tests run with every transport type linked, as the operator links them:
// the shared rules word their refusals from what every registered type can do (a pooler may run
// over "proxy, ssh or vpn"), and the types in their own packages register only when linked.
import (
	"testing"

	"github.com/tunnelbench/tunnelbench/internal/transport"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler"
	"github.com/tunnelbench/tunnelbench/internal/transport/pooler/pgbouncer"
	"github.com/tunnelbench/tunnelbench/internal/transport/ssh"
	_ "github.com/tunnelbench/tunnelbench/internal/transport/transports"
	"github.com/tunnelbench/tunnelbench/internal/transport/vpn"
)

// TestPartNames: the names this package's tests use for the parts of types in their own packages
// are those types' own.
func TestPartNames(t *testing.T) {
	for _, tt := range []struct {
		name      string
		got, want any
	}{
		{"ssh.GatewayComponent", transport.TestSSHGateway, ssh.GatewayComponent},
		{"vpn.VPNClientContainer", transport.TestVPNClient, vpn.VPNClientContainer},
		{"vpn.VPNGatewayComponent", transport.TestVPNGateway, vpn.VPNGatewayComponent},
		{"pooler.PoolerContainer", transport.TestPoolerContainer, pooler.PoolerContainer},
		{"pooler.PoolerComponent", transport.TestPoolerComponent, pooler.PoolerComponent},
		{"pooler.PoolerPart", transport.TestPoolerPart, pooler.PoolerPart},
		{"pooler.PoolerListenPort", transport.TestPoolerListen, int(pooler.PoolerListenPort)},
		{"pooler.CNPGPoolerPort", transport.TestCNPGPoolerPort, int(pooler.CNPGPoolerPort)},
		{"pgbouncer.CNPGExporterPort", transport.TestCNPGExporter, int(pgbouncer.CNPGExporterPort)},
	} {
		if tt.got != tt.want {
			t.Errorf("%s is %v, this package's tests name it %v", tt.name, tt.want, tt.got)
		}
	}
}
