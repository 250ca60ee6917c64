package engine

import "fmt"

// RunError is a failed run with the load generator's own last meaningful error line.
type RunError struct {
	Err       error
	LastError string
}

func (e *RunError) Error() string {
	if e.LastError == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v: %s", e.Err, e.LastError)
}

func (e *RunError) Unwrap() error { return e.Err }
