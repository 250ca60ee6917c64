package transport

// The names of parts that types in their own packages declare, as this package's tests use them:
// those packages import this one, so its own tests cannot import them. every_type_test.go, an
// external test that links them all, checks each name against the type's own constant.
const (
	TestSSHGateway      = "ssh-gateway" // ssh.GatewayComponent
	TestVPNClient       = "wireguard"   // vpn.VPNClientContainer
	TestVPNGateway      = "vpn-gateway" // vpn.VPNGatewayComponent
	TestPoolerContainer = "pgbouncer"   // pooler.PoolerContainer
	TestPoolerComponent = "pooler"      // pooler.PoolerComponent
	TestPoolerPart      = "pooler"      // pooler.PoolerPart
	TestPoolerListen    = 6432          // pooler.PoolerListenPort
	TestCNPGPoolerPort  = 5432          // pooler.CNPGPoolerPort
	TestCNPGExporter    = 9127          // pgbouncer.CNPGExporterPort
)
