package crossbench

import (
	"fmt"
	"reflect"
	"slices"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// Comparable says why two benchmarks cannot be compared, or nil. Both must have completed, with
// interleaved rounds (a sequential benchmark has no rounds to pair with its baseline); they must
// have run the same load (repetitions, seed and order aside), over the same link, against the same
// server (spec and reported version), with the same baseline, and every transport they share must
// be of the same type: otherwise a difference would be the setup's, not the change's.
func Comparable(before, after *benchv1.TunnelBenchmark) error {
	for _, tb := range []*benchv1.TunnelBenchmark{before, after} {
		switch {
		case tb.Status.Phase != benchv1.PhaseCompleted:
			return fmt.Errorf("%s is %s, not Completed: only finished benchmarks are compared",
				qualified(tb), orUnknown(string(tb.Status.Phase)))
		case tb.Order() != benchv1.OrderInterleaved:
			return fmt.Errorf("%s ran in %s order: its rounds have no pairs with its baseline, which comparing benchmarks needs",
				qualified(tb), tb.Order())
		}
	}
	if d := differences(before, after, false); len(d) > 0 {
		return fmt.Errorf("%s and %s differ in %v: their difference would be the setup's, not the change's",
			qualified(before), qualified(after), d)
	}
	if len(commonTransports(before, after)) == 0 {
		return fmt.Errorf("%s and %s share no transport besides the baseline %s", qualified(before), qualified(after),
			before.Spec.Transports[0].Name)
	}
	return nil
}

// PilotDifferences names what a pilot's setup differs in from a planned benchmark's, which may
// not have run yet: everything Comparable checks but the server's version (the planned one has
// none) and the load's length, warm-up and precision target (a pilot runs without one, and its
// spread is rescaled to the planned length).
func PilotDifferences(planned, pilot *benchv1.TunnelBenchmark) []string {
	return differences(planned, pilot, true)
}

// differences names what the two benchmarks' setups differ in; forPlan leaves aside what a pilot
// may differ in.
func differences(before, after *benchv1.TunnelBenchmark, forPlan bool) []string {
	var out []string
	if !reflect.DeepEqual(comparableLoad(before, forPlan), comparableLoad(after, forPlan)) {
		out = append(out, "spec.load")
	}
	if !reflect.DeepEqual(before.Spec.Sweep, after.Spec.Sweep) {
		out = append(out, "spec.sweep")
	}
	if !reflect.DeepEqual(before.Spec.Network, after.Spec.Network) {
		out = append(out, "spec.network")
	}
	if !reflect.DeepEqual(before.Spec.Server, after.Spec.Server) {
		out = append(out, "spec.server")
	}
	if !forPlan && before.Status.ServerVersion != after.Status.ServerVersion {
		out = append(out, fmt.Sprintf("the server's version (%q, %q)", before.Status.ServerVersion, after.Status.ServerVersion))
	}
	bb, ab := before.Spec.Transports[0], after.Spec.Transports[0]
	if bb.Name != ab.Name || bb.Type != ab.Type || !reflect.DeepEqual(bb.Network, ab.Network) {
		out = append(out, fmt.Sprintf("the baseline (%s %s, %s %s)", bb.Name, bb.Type, ab.Name, ab.Type))
	}
	for _, t := range before.Spec.Transports {
		if o := transport(after, t.Name); o != nil && (o.Type != t.Type || !reflect.DeepEqual(o.Network, t.Network)) {
			out = append(out, fmt.Sprintf("transport %s's type or link", t.Name))
		}
	}
	return out
}

// comparableLoad is spec.load without what may differ between comparable benchmarks, and for a
// plan, between a pilot and the planned benchmark.
func comparableLoad(tb *benchv1.TunnelBenchmark, forPlan bool) benchv1.LoadSpec {
	l := *tb.Spec.Load.DeepCopy()
	l.Repetitions, l.Seed, l.Order = 0, nil, ""
	if forPlan {
		l.Duration, l.Warmup, l.Precision = nil, nil, nil
	}
	return l
}

// commonTransports are the transports besides the baseline that both benchmarks measured, in
// before's order.
func commonTransports(before, after *benchv1.TunnelBenchmark) []string {
	var out []string
	for _, t := range before.Spec.Transports[1:] {
		if transport(after, t.Name) != nil && measured(before, t.Name) && measured(after, t.Name) {
			out = append(out, t.Name)
		}
	}
	return slices.Clip(out)
}

// measured reports whether tb has a result of the transport at every point.
func measured(tb *benchv1.TunnelBenchmark, name string) bool {
	for point := range tb.Points() {
		if benchv1.FindResult(tb.ResultsAt(point), name) == nil {
			return false
		}
	}
	return true
}

func transport(tb *benchv1.TunnelBenchmark, name string) *benchv1.TransportSpec {
	for i := range tb.Spec.Transports {
		if tb.Spec.Transports[i].Name == name {
			return &tb.Spec.Transports[i]
		}
	}
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "not started"
	}
	return s
}
