package runspec

import "time"

// LiveKey is the key of the run's result ConfigMap under which the runner keeps its live progress
// (Live) while the load runs.
const LiveKey = "live.json"

// Live phases: the discarded warm-up, then the measured load.
const (
	LiveWarmup = "warm-up"
	LiveLoad   = "load"
)

// Live is the runner's progress at pgbench's latest progress report (-P), summed over its
// tunnels: what the operator shows in status.live and as the live tps gauge while a run runs. The
// runner writes it once per progress report at most; it is the contract of that key, on both sides.
type Live struct {
	// Phase is LiveWarmup or LiveLoad.
	Phase string `json:"phase"`
	// ElapsedSeconds of DurationSeconds (0 for a load of a number of transactions).
	ElapsedSeconds  float64 `json:"elapsedSeconds"`
	DurationSeconds float64 `json:"durationSeconds,omitempty"`
	// TPS and LatencyMs of the latest progress interval, over every tunnel.
	TPS       float64 `json:"tps"`
	LatencyMs float64 `json:"latencyMs"`
	// Time is when the runner read the report.
	Time time.Time `json:"time"`
}
