package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConcurrencyPolicy says what a schedule does when a run is due while its previous benchmark
// has not ended.
// +kubebuilder:validation:Enum=Forbid;Replace;Allow
type ConcurrencyPolicy string

const (
	// ConcurrencyForbid skips the run that is due: two benchmarks of one schedule measure one
	// server, and the second would only queue behind the first.
	ConcurrencyForbid ConcurrencyPolicy = "Forbid"
	// ConcurrencyReplace cancels the running benchmark and starts the new one.
	ConcurrencyReplace ConcurrencyPolicy = "Replace"
	// ConcurrencyAllow creates the new benchmark anyway; an exclusive one queues until the
	// previous ends.
	ConcurrencyAllow ConcurrencyPolicy = "Allow"
)

// ScheduledTunnelBenchmarkSpec is a TunnelBenchmark to create on a schedule, and how its results
// are judged against the schedule's history.
type ScheduledTunnelBenchmarkSpec struct {
	// Schedule is when to run, in cron format as a CronJob's: five fields (minute, hour, day of
	// month, month, day of week) or a macro (@hourly, @daily, @weekly, @monthly, @yearly).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Schedule string `json:"schedule"`

	// TimeZone is the IANA time zone the schedule is read in, e.g. "Europe/Paris"; UTC when unset.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// Suspend stops new runs; a running benchmark is left to end.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// ConcurrencyPolicy is what happens when a run is due while the previous benchmark has not
	// ended: Forbid (default) skips it, Replace cancels the running one, Allow creates it anyway
	// (it queues behind the running one on their server).
	// +kubebuilder:default=Forbid
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// StartingDeadlineSeconds is how late a run may start (the operator down, the schedule
	// suspended) before it is skipped as missed; the latest missed run within it starts, never more
	// than one. Default 300.
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=86400
	// +kubebuilder:default=300
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// SuccessfulBenchmarksHistoryLimit is how many completed benchmarks to keep (default 3); older
	// ones are deleted, their results kept in the history store when the operator has one.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=3
	// +optional
	SuccessfulBenchmarksHistoryLimit *int32 `json:"successfulBenchmarksHistoryLimit,omitempty"`

	// FailedBenchmarksHistoryLimit is how many failed or cancelled benchmarks to keep (default 1).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=1
	// +optional
	FailedBenchmarksHistoryLimit *int32 `json:"failedBenchmarksHistoryLimit,omitempty"`

	// BenchmarkTemplate is the TunnelBenchmark each run creates. It is checked at admission as a
	// TunnelBenchmark of the schedule's namespace created by the user applying the schedule.
	BenchmarkTemplate TunnelBenchmarkTemplate `json:"benchmarkTemplate"`

	// Regression is how each new result is judged against the results before it.
	// +optional
	Regression *RegressionSpec `json:"regression,omitempty"`
}

// TunnelBenchmarkTemplate is the benchmark a schedule creates.
type TunnelBenchmarkTemplate struct {
	// Metadata holds labels and annotations for the benchmarks created.
	// +optional
	Metadata TemplateMetadata `json:"metadata,omitempty"`

	// Spec is the benchmark's spec.
	Spec TunnelBenchmarkSpec `json:"spec"`
}

// TemplateMetadata is the part of a benchmark's metadata a template sets.
type TemplateMetadata struct {
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// RegressionSpec is how a schedule judges each new result against its history: per transport,
// the paired ratio to the baseline and the absolute figure (tps; latency for an open loop; MB/s
// for a copy), each figure across the benchmark's transports at once: a closed test of prediction
// bands of the earlier results in the window, at most 2.5 % false alarms a figure, with a minimum
// effect (docs/user-guide/schedules.md, "Regressions").
type RegressionSpec struct {
	// Window is how many earlier results (the newest, those not found regressed) form the
	// reference. Default 10; at least 3 are needed before anything is judged.
	// +kubebuilder:validation:Minimum=3
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=10
	// +optional
	Window *int32 `json:"window,omitempty"`

	// MinEffectPercent is the smallest change called a regression, in percent of the reference
	// level. Default 10: twice the 5–7 % by which benchmarks of one setup move between them.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=90
	// +kubebuilder:default=10
	// +optional
	MinEffectPercent *int32 `json:"minEffectPercent,omitempty"`

	// Since starts the reference: results completed before it are not compared with. Set it to
	// accept a lasting change as the new level (a regression found stays raised until the path
	// is back or the reference starts after the change).
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
}

// ScheduledBenchmark is one benchmark a schedule created.
type ScheduledBenchmark struct {
	// Name is the TunnelBenchmark's name.
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// ScheduledTime is the time the run was due.
	ScheduledTime metav1.Time `json:"scheduledTime"`
	// Phase is the benchmark's phase when last seen.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// Recorded says whether its results are in the history store.
	// +optional
	Recorded bool `json:"recorded,omitempty"`
}

// TrendBand is the reference a result was judged against: the earlier results' level and the band
// a result of this transport alone falls in when nothing changed (at 2.5 % a side for a benchmark
// of one transport, 2.5 %/2k for k transports judged together).
type TrendBand struct {
	Level float64 `json:"level"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	// Results is how many earlier results the reference holds.
	Results int32 `json:"results"`
}

// TrendPoint is one figure of one benchmark, with its own interval over its rounds.
type TrendPoint struct {
	// Benchmark is the TunnelBenchmark that measured it.
	// +kubebuilder:validation:MaxLength=63
	Benchmark string  `json:"benchmark"`
	Value     float64 `json:"value"`
	// +optional
	Low float64 `json:"low,omitempty"`
	// +optional
	High float64 `json:"high,omitempty"`
}

// TransportJudgement is how a schedule's newest result for one transport and figure compares
// with the results before it.
type TransportJudgement struct {
	// +kubebuilder:validation:MaxLength=63
	Transport string `json:"transport"`
	// Figure is ratio (to the baseline), tps, latency or throughput.
	// +kubebuilder:validation:MaxLength=16
	Figure string `json:"figure"`
	// After is the newest result.
	After TrendPoint `json:"after"`
	// Before is the reference; absent when it had fewer than 3 results.
	// +optional
	Before *TrendBand `json:"before,omitempty"`
	// ChangePercent is After over the reference level, minus 1, in percent, rounded.
	// +optional
	ChangePercent int32 `json:"changePercent,omitempty"`
	// Regressed is true when the newest result is worse by at least the minimum effect and lies
	// beyond the band on the worse side, or worse together with the benchmark's other transports
	// (every group of them beyond its band: a closed test over the transports).
	Regressed bool `json:"regressed"`
	// DetectablePercent is the smallest worsening of this transport's figure alone, in percent of
	// the reference level, that this check is sure to find (its band's edge on the worse side, or
	// the minimum effect): a smaller one passes unseen unless the other transports worsen with it.
	// Absent when nothing was judged.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	// +optional
	DetectablePercent int32 `json:"detectablePercent,omitempty"`
	// DetectableTogetherPercent is the smallest worsening found when every transport's figure
	// worsens alike (a slower server or node): the transports' mean is judged too, with a
	// narrower band. Absent when nothing was judged.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	// +optional
	DetectableTogetherPercent int32 `json:"detectableTogetherPercent,omitempty"`
	// Reason says so in words.
	// +kubebuilder:validation:MaxLength=512
	Reason string `json:"reason"`
}

// ScheduledTunnelBenchmarkStatus is what a schedule has done and found.
type ScheduledTunnelBenchmarkStatus struct {
	// ObservedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready (the schedule is valid and running, or why not), Regressed (the newest
	// result of a transport regressed; its message names the transport, the figure, before and
	// after).
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// LastScheduleTime is when the last run was due.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// NextScheduleTime is when the next run is due.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// LastSuccessfulTime is when the last benchmark completed.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// TemplateHash identifies the template's spec: results are compared with those of the same
	// hash only.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	TemplateHash string `json:"templateHash,omitempty"`

	// Benchmarks are the benchmarks kept, newest last.
	// +kubebuilder:validation:MaxItems=202
	// +optional
	Benchmarks []ScheduledBenchmark `json:"benchmarks,omitempty"`

	// Latest judges the newest completed benchmark's results, per transport and figure.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Latest []TransportJudgement `json:"latest,omitempty"`

	// Skipped counts runs skipped: due while the previous ran (Forbid) or missed beyond the
	// starting deadline.
	// +optional
	Skipped int32 `json:"skipped,omitempty"`
}

// ScheduledTunnelBenchmark creates a TunnelBenchmark on a schedule, keeps the last ones, records
// their results in the history store and raises Regressed when a transport's result moves beyond
// what its history says results vary by.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=stb,categories=tunnelbench
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 40",message="metadata.name must be at most 40 characters: a benchmark it creates is named after it with the run's time appended"
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`,description="the cron schedule"
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`,description="whether new runs are suspended"
// +kubebuilder:printcolumn:name="Last",type=date,JSONPath=`.status.lastScheduleTime`,description="when the last run was made"
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextScheduleTime`,description="when the next run is due"
// +kubebuilder:printcolumn:name="Regressed",type=string,JSONPath=`.status.conditions[?(@.type=="Regressed")].status`,description="True when the latest run regressed against the history"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`,description="since the schedule was created"
type ScheduledTunnelBenchmark struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ScheduledTunnelBenchmarkSpec `json:"spec"`

	// +optional
	Status ScheduledTunnelBenchmarkStatus `json:"status,omitempty"`
}

// ScheduledTunnelBenchmarkList is a list of ScheduledTunnelBenchmarks.
// +kubebuilder:object:root=true
type ScheduledTunnelBenchmarkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ScheduledTunnelBenchmark `json:"items"`
}
