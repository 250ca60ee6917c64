// Package runspec is the contract between the operator and the runner: Run is everything the
// operator tells `tunnelbench-runner run` about one run, Args renders it as the container's flags
// and BindFlags reads them back, so both ends share one definition and one set of defaults. It
// also names the paths, ports and volumes of the runner pod that both ends must agree on.
//
// It depends on neither a database driver nor the Kubernetes client libraries: the operator
// imports it without pulling in pgx, and the runner without pulling in client-go.
package runspec
