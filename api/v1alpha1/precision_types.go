package v1alpha1

// PrecisionGoal is what a benchmark with a precision target stops for.
// +kubebuilder:validation:Enum=halfWidth;decide
type PrecisionGoal string

const (
	// PrecisionHalfWidth stops once every transport's ratio to the baseline is known within
	// ±halfWidthPercent (the interval is the ratio ×÷ 1 + halfWidthPercent/100).
	PrecisionHalfWidth PrecisionGoal = "halfWidth"
	// PrecisionDecide stops once every transport's verdict is settled: faster or slower, or, with
	// minEffectPercent, an interval within ±minEffectPercent of the baseline (no difference that
	// large).
	PrecisionDecide PrecisionGoal = "decide"
)

// PrecisionTarget makes spec.load.repetitions a bound instead of a count: after every round from
// the third, the benchmark looks at its comparisons and runs no further round once they meet the
// goal. Its intervals are a sequential design's (repeated confidence intervals at one nominal level
// per look, calibrated so that the chance of any false verdict over all the looks the bound allows
// stays at 5 %, Holm across the transports included): looking after every round does not raise the
// error rate, and an answer found early is as trustworthy as one at the bound. The intervals are
// wider than a fixed design's of the same rounds; a benchmark that cannot meet its goal within its
// bound ends Completed with status.precision saying what it reached.
// +kubebuilder:validation:XValidation:rule="self.goal != 'halfWidth' || has(self.halfWidthPercent)",message="spec.load.precision.halfWidthPercent is required with goal halfWidth"
// +kubebuilder:validation:XValidation:rule="self.goal == 'halfWidth' || !has(self.halfWidthPercent)",message="spec.load.precision.halfWidthPercent applies to goal halfWidth only"
// +kubebuilder:validation:XValidation:rule="self.goal == 'decide' || !has(self.minEffectPercent)",message="spec.load.precision.minEffectPercent applies to goal decide only"
type PrecisionTarget struct {
	// Goal: halfWidth (every ratio known within ±halfWidthPercent) or decide (every verdict
	// settled).
	Goal PrecisionGoal `json:"goal"`

	// HalfWidthPercent is the precision asked of every ratio with goal halfWidth, in percent.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	// +optional
	HalfWidthPercent *int32 `json:"halfWidthPercent,omitempty"`

	// MinEffectPercent, with goal decide, is the smallest difference that matters: a transport
	// whose interval lies within ±minEffectPercent of the baseline is settled too (no difference
	// that large), without it only faster or slower settle, so two equal paths run to the bound.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	// +optional
	MinEffectPercent *int32 `json:"minEffectPercent,omitempty"`
}

// PrecisionStatus is how a benchmark with a precision target stands against it.
type PrecisionStatus struct {
	// Goal is spec.load.precision.goal.
	Goal PrecisionGoal `json:"goal"`
	// Rounds is how many rounds every transport has completed.
	Rounds int32 `json:"rounds"`
	// MaxRounds is the bound, spec.load.repetitions.
	MaxRounds int32 `json:"maxRounds"`
	// Met is true once every comparison meets the goal.
	Met bool `json:"met"`
	// StoppedAfter is the round after which the benchmark runs no further round: the goal met, or
	// the bound reached; absent while rounds remain.
	// +optional
	StoppedAfter int32 `json:"stoppedAfter,omitempty"`
	// WidestHalfWidthPercent is the widest interval's half-width among the comparisons, in percent
	// (the interval is the ratio ×÷ 1 + this/100); absent before the first look.
	// +optional
	WidestHalfWidthPercent *float64 `json:"widestHalfWidthPercent,omitempty"`
	// Unsettled are the transports that do not meet the goal yet.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=63
	// +optional
	Unsettled []string `json:"unsettled,omitempty"`
	// Message says which goal was met after how many rounds, or where the benchmark stands, or why
	// it stopped short and what it reached.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}
