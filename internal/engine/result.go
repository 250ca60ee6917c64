package engine

// Result is a load generator's summary of one run, whichever engine it loaded: the figures every
// engine's generator gives (tps, latency, transactions, failures, progress) in one form that the
// operator reads without knowing the engine. Its JSON form is the runner's output contract
// (`runner parse` prints it); absent figures are null rather than zero.
type Result struct {
	TPS                     float64         `json:"tps"`
	TPSIncludingConnections *float64        `json:"tpsIncludingConnections"`
	LatencyAvgMs            float64         `json:"latencyAvgMs"`
	LatencyStddevMs         *float64        `json:"latencyStddevMs"`
	ConnectionTimeMs        float64         `json:"connectionTimeMs"`
	Reconnect               bool            `json:"reconnect"`
	Transactions            int64           `json:"transactions"`
	FailedTransactions      int64           `json:"failedTransactions"`
	Clients                 int32           `json:"clients"`
	Threads                 int32           `json:"threads"`
	DurationSeconds         *float64        `json:"durationSeconds"`
	Progress                []ProgressPoint `json:"progress"`
	// SerializationFailures and DeadlockFailures split FailedTransactions by cause, where the
	// generator counts them (pgbench with --failures-detailed); nil when it did not.
	SerializationFailures *int64 `json:"serializationFailures,omitempty"`
	DeadlockFailures      *int64 `json:"deadlockFailures,omitempty"`
	// OpenLoop is how a run at a fixed rate kept its schedule; nil for a closed loop.
	OpenLoop *OpenLoop `json:"openLoop,omitempty"`
}

// OpenLoop is the account of a rate-limited run: the schedule lag, the transactions skipped for
// being latency-limit behind and, with a latency limit, those that lasted longer than it.
type OpenLoop struct {
	LagAvgMs float64 `json:"lagAvgMs"`
	LagMaxMs float64 `json:"lagMaxMs"`
	Skipped  int64   `json:"skipped"`
	Late     *int64  `json:"late,omitempty"`
}

// ProgressPoint is one progress report: the interval's tps and mean latency, at T seconds into the
// run (pgbench's -P lines).
type ProgressPoint struct {
	T         float64 `json:"t"`
	TPS       float64 `json:"tps"`
	LatencyMs float64 `json:"latencyMs"`
}
