// Command dashboard writes TunnelBench's Grafana dashboard (internal/present/dashboard) into the Helm chart,
// which ships it as a ConfigMap: `make manifests` runs it, `make verify` fails when it is stale.
package main

import (
	"fmt"
	"os"

	"github.com/tunnelbench/tunnelbench/internal/present/dashboard"
)

// Path is where the chart reads the dashboard, relative to the repository's root.
const Path = "charts/tunnelbench/files/dashboards/tunnelbench.json"

func main() {
	b, err := dashboard.JSON()
	if err == nil {
		err = os.WriteFile(Path, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dashboard:", err)
		os.Exit(1)
	}
}
