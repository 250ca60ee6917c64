package benchmark

import (
	"errors"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// A step of a pass that cannot go on says so in one way: it returns an error. An error of the API
// or of the cluster is retried by controller-runtime with its back-off; the pass's own stops are
// errors too, of one type (passStop), which the pass turns into its answer (passResult), as
// CloudNativePG's ErrNextLoop and ErrTerminateLoop do:
//
//   - nextPass(res): nothing more to do now (a Job runs, a peer starts, the server's Lease is held,
//     a run was just recorded and the next one's Job waits for the written result): the pass ends,
//     its status is written, and the next pass comes as res says.
//   - errEnded, through end: the step ended the benchmark (fail wrote why, with its condition and
//     event); the pass ends and writes it.
//
// nil means the step is done and the pass goes on. No step returns a flag, a result or a problem
// beside its error for its caller to interpret.

// passStop is a pass's own stop: no failure, so never logged as one or retried with back-off.
type passStop struct {
	result ctrl.Result
	ended  bool
}

func (s *passStop) Error() string {
	if s.ended {
		return "the benchmark ended in this pass"
	}
	return fmt.Sprintf("this pass goes no further; the next comes after %s", s.result.RequeueAfter)
}

// errEnded stops a pass whose step ended the benchmark.
var errEnded error = &passStop{ended: true}

// nextPass stops the pass; the next one comes as res says.
func nextPass(res ctrl.Result) error {
	return &passStop{result: res}
}

// end fails the benchmark with a reason and a message that says what broke and what to do, and
// stops the pass.
func (r *TunnelBenchmarkReconciler) end(tb *benchv1.TunnelBenchmark, reason, message string) error {
	r.fail(tb, reason, message)
	return errEnded
}

// passResult is controller-runtime's answer to what a pass's steps returned: a pass's own stop is
// no error (with its requeue, if any); anything else is an error, retried with back-off.
func passResult(err error) (ctrl.Result, error) {
	var stop *passStop
	if errors.As(err, &stop) {
		return stop.result, nil
	}
	return ctrl.Result{}, err
}
