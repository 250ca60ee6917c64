package v1alpha1

import "k8s.io/apimachinery/pkg/api/resource"

// CopyData is what a copy workload moves.
// +kubebuilder:validation:Enum=text;random
type CopyData string

const (
	// CopyText is repetitive text: what a compressing path (an ssh tunnel with compression)
	// shrinks.
	CopyText CopyData = "text"
	// CopyRandom is random bytes: nothing compresses them.
	CopyRandom CopyData = "random"
)

// CopyLoad moves data instead of running transactions: each run is one `COPY … TO STDOUT (FORMAT
// binary)` of a data set that the initialization creates on the server, so that nothing crosses
// the measured path before the run. Its figures are MB/s and rows/s.
type CopyLoad struct {
	// Size is the data set's size, between 1Mi and 1Gi: rows of 1 KiB.
	// +kubebuilder:validation:XValidation:rule="quantity(self).compareTo(quantity('1Mi')) >= 0 && quantity(self).compareTo(quantity('1Gi')) <= 0",message="spec.load.copy.size must be between 1Mi and 1Gi"
	Size resource.Quantity `json:"size"`

	// Data is text (default: repetitive text, which compresses well) or random (incompressible).
	// +kubebuilder:default=text
	// +optional
	Data CopyData `json:"data,omitempty"`
}

// CopyResult is a transport's copy runs: the medians over the repetitions of what one COPY moved
// per second.
type CopyResult struct {
	// Data is what was copied and Bytes how much of it crossed the path per run (the COPY's
	// binary stream).
	Data  CopyData `json:"data"`
	Bytes int64    `json:"bytes"`
	Rows  int64    `json:"rows"`
	// MBPerSecond is the median of the runs' megabytes (10^6 bytes) per second, with its spread.
	MBPerSecond       float64 `json:"mbPerSecond"`
	MBPerSecondSpread *Spread `json:"mbPerSecondSpread,omitempty"`
	// RowsPerSecond is the median of the runs' rows per second.
	RowsPerSecond float64 `json:"rowsPerSecond"`
}
