//go:build e2e

package e2e

import (
	"math"
	"testing"
)

// sleepSlack is how much longer than its sleep a sleeping transaction may take: the timer's slack
// and the runner's turn on this machine's two shared cores, whose identical runs differ by up to
// 30 % (a CI run once measured 11.1 ms for a 10 ms sleep while other groups ran).
const sleepSlack = 0.30

// sleepMs is how long the sleeping scripts of the placement, pods and sweep cases sleep a
// transaction (`\sleep 10 ms`).
const sleepMs = 10

// checkSleepPhysics checks the figures of clients that only sleep sleepMs per transaction and never
// reach the server, against what the sleep alone allows. No transaction is shorter than the sleep,
// so tps never exceeds clients × 1000 / sleepMs; the mean latency is the sleep plus at most
// sleepSlack of it; and tps and latency describe the same closed loop, so Little's law holds
// (tps = clients / latency, within 5 %): the figure is what the clients did, not what was asked.
func checkSleepPhysics(t *testing.T, label string, tps, latencyMs float64, clients int32) {
	t.Helper()
	n := float64(clients)
	if ceiling := n * 1000 / sleepMs; tps > ceiling*1.02 {
		t.Errorf("%s: %.1f tps, more than %d clients sleeping %d ms can make (%.0f)", label, tps, clients, sleepMs, ceiling)
	}
	if latencyMs < sleepMs || latencyMs > sleepMs*(1+sleepSlack) {
		t.Errorf("%s: mean latency %.3f ms, want the %d ms sleep plus at most %.0f %%", label, latencyMs, sleepMs,
			sleepSlack*100)
		return
	}
	if little := n * 1000 / latencyMs; math.Abs(tps-little) > 0.05*little {
		t.Errorf("%s: %.1f tps, but %d clients at %.3f ms make %.1f (Little's law, within 5 %%)", label, tps, clients,
			latencyMs, little)
	}
}
