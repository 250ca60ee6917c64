package architecture

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEveryTransportLinkedWhereTheRegistryIsRead: a transport type in its own package
// (internal/transport/proxy) registers from its init, so a binary that links the registry without
// internal/transport/transports would not know it: the webhook would refuse a pooler over it, the
// reconciler would fail it as unsupported, and a test would silently leave it out. Every command and
// every test binary that links internal/transport links internal/transport/transports, except the
// transports' own packages' tests, which test one type each.
func TestEveryTransportLinkedWhereTheRegistryIsRead(t *testing.T) {
	registry, all := module+"/internal/transport", module+"/internal/transport/transports"
	c := exec.Command("go", "list", "-test", "-f", "{{.ImportPath}}|{{.Name}}|{{join .Deps \",\"}}", "./...")
	c.Dir = root
	out, err := c.Output()
	if err != nil {
		t.Fatalf("go list -test ./...: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.SplitN(line, "|", 3)
		if len(fields) != 3 || fields[1] != "main" || strings.Contains(fields[0], " [") {
			continue
		}
		binary := strings.TrimSuffix(fields[0], ".test")
		if strings.HasPrefix(binary, registry+"/") {
			continue
		}
		links := func(pkg string) bool {
			for _, d := range strings.Split(fields[2], ",") {
				if d == pkg || strings.HasPrefix(d, pkg+" [") {
					return true
				}
			}
			return false
		}
		if links(registry) {
			checked++
			if !links(all) {
				t.Errorf("%s links %s without %s: the transports in their own packages are unknown to it", fields[0], registry, all)
			}
		}
	}
	if checked == 0 {
		t.Error("no binary links the transport registry: the check checks nothing")
	}
}
