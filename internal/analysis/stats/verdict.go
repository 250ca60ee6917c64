package stats

import (
	"fmt"
	"strconv"
)

// Verdict is what a Ratio lets a report claim about the candidate against the baseline.
type Verdict string

const (
	// Faster means the whole 95 % interval of candidate/baseline lies above 1.
	Faster Verdict = "faster"
	// Slower means the whole 95 % interval lies below 1.
	Slower Verdict = "slower"
	// Indistinguishable means the interval contains 1, or there is no interval: the rounds do not
	// show a difference, which is not the same as showing there is none.
	Indistinguishable Verdict = "indistinguishable"
)

// noIntervalReason is the Reason of a Ratio from a single repetition.
const noIntervalReason = "one repetition: no interval"

// Verdict classifies the ratio by its interval alone, not by the estimate, so that a report never
// calls a transport faster on the strength of a mean that the rounds' spread cannot support. The
// words assume the ratio is of rates where higher is better, as PairedRatio's inputs are; for a
// ratio of latencies they read the other way round.
func (r Ratio) Verdict() Verdict {
	return r.VerdictBeyond(0)
}

// VerdictBeyond is Verdict against a minimum effect: faster when the whole interval lies above
// 1/(1−threshold), slower when below 1−threshold, so that a difference the interval cannot place
// beyond the threshold is no verdict.
func (r Ratio) VerdictBeyond(threshold float64) Verdict {
	switch {
	case !r.HasInterval:
		return Indistinguishable
	case r.Low > 1/(1-threshold):
		return Faster
	case r.High < 1-threshold:
		return Slower
	default:
		return Indistinguishable
	}
}

// Reason says in a few words why Verdict came out as it did, for a report's message column.
func (r Ratio) Reason() string {
	switch {
	case r.N == 0:
		return "no repetitions: no interval"
	case !r.HasInterval:
		return noIntervalReason
	}
	level := r.Level
	if level == 0 {
		level = 0.95
	}
	adjusted := ""
	if level != 0.95 {
		adjusted = " (Holm-adjusted across the transports)"
	}
	return fmt.Sprintf("%s%% interval%s [%.3f, %.3f] over %d repetitions %s",
		strconv.FormatFloat(100*level, 'g', 4, 64), adjusted, r.Low, r.High, r.N, r.where())
}

// where says where the interval lies against 1, as its verdict reads it.
func (r Ratio) where() string {
	switch r.Verdict() {
	case Faster:
		return "lies above 1"
	case Slower:
		return "lies below 1"
	}
	return "contains 1"
}
