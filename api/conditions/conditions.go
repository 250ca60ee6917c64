// Package conditions is the vocabulary a user reads in `kubectl describe` and `kubectl get -o
// yaml`: every condition type of a TunnelBenchmark and a ScheduledTunnelBenchmark, every reason of
// those conditions, and every reason of the Events the operator records. It holds constants only and
// imports nothing, so that the runner, which reports a failure's reason from inside its pod, names
// the same reasons without linking the CRD types (test/architecture checks both: no condition type
// or reason is declared anywhere else, and cmd/runner does not import api/v1alpha1).
// docs/reference/conditions.md explains each one to users.
package conditions

// Condition types of a TunnelBenchmark's lifecycle.
const (
	// ServerResolved is True once the server's Service name and Secrets are known. The controller
	// sets it False (reason SecretNotFound, InvalidSecret) while a Secret is missing.
	ServerResolved = "ServerResolved"
	// Initialized is True once `pgbench -i` succeeded, or False with reason NotRequested when
	// spec.load.initialize is false.
	Initialized = "Initialized"
	// Progressing is True while Jobs run, and False once the benchmark ended.
	Progressing = "Progressing"
	// Completed is True when every transport has a result.
	Completed = "Completed"
	// Failed is True when the benchmark failed; its reason and message say what broke and what to
	// do.
	Failed = "Failed"
	// Queued is True while the benchmark waits for another benchmark of its server or for a place.
	Queued = "Queued"
	// JobsRemoved is True once spec.ttlSecondsAfterFinished removed the ended benchmark's Jobs,
	// pods and result ConfigMaps.
	JobsRemoved = "JobsRemoved"
	// Regressed is True on a scheduled benchmark, and on its ScheduledTunnelBenchmark, when one of
	// its transports' results regressed against the schedule's history; its message names the
	// transport, the figure, before and after.
	Regressed = "Regressed"
)

// Warning condition types of a TunnelBenchmark: the benchmark goes on, its figures carry a caveat.
const (
	// LinkMismatch is True when a transport's link, as the runner measured it, misses the asked one
	// by more than benchv1.LinkTolerance: its figures describe another link than the one asked for.
	LinkMismatch = "LinkMismatch"
	// ClientBound is True once a run was limited by its client (pgbench and the runner ran out of
	// the CPU they could use: reason ClientLimited) or by its node (the parts on the runner's node
	// used its cores together: NodeContention), so the figure says more about the runner's node and
	// CPU than about the path.
	ClientBound = "ClientBound"
	// TransactionsFailed is True once a run had more than benchv1.MaxFailedShare of its
	// transactions fail: that run takes no part in any comparison.
	TransactionsFailed = "TransactionsFailed"
	// RateNotSustained is True once an open-loop run skipped more than benchv1.MaxSkippedShare of
	// its schedule: the path could not keep spec.load.rate and the run takes no part in any
	// comparison.
	RateNotSustained = "RateNotSustained"
	// LatencyInconsistent is True once pgbench measured a closed-loop latency far below the cycle
	// its clients ran: the run's tps stands, its latency figures and percentiles do not.
	LatencyInconsistent = "LatencyInconsistent"
	// SharedNode is True when a runner pod ran on the node of the server's pod.
	SharedNode = "SharedNode"
	// NotSteady is True once a run's throughput trended over its window: not a steady state.
	NotSteady = "NotSteady"
)

// Condition types of a ScheduledTunnelBenchmark (Regressed too).
const (
	// Ready says whether the schedule runs: reasons Scheduled, Suspended, InvalidSchedule,
	// CreateFailed.
	Ready = "Ready"
	// Judged says whether the latest run was compared with the history: reasons UpToDate,
	// HistoryUnavailable.
	Judged = "Judged"
	// Authorized says whether the schedule's author may still do what its next run does.
	Authorized = "Authorized"
)

// Reasons of the lifecycle conditions, and of the Events that go with them.
const (
	ReasonAccepted    = "Accepted"
	ReasonResolved    = "Resolved"
	ReasonWaiting     = "Waiting"
	ReasonJobCreated  = "JobCreated"
	ReasonJobRunning  = "JobRunning"
	ReasonInitialized = "Initialized"
	// ReasonNotRequested: spec.load.initialize is false.
	ReasonNotRequested = "NotRequested"
	ReasonRunCompleted = "RunCompleted"
	ReasonCompleted    = "Completed"
	// ReasonCancelled is the reason of the Completed and Progressing conditions of a benchmark that
	// spec.cancel stopped.
	ReasonCancelled = "Cancelled"
	// ReasonTTLExpired: spec.ttlSecondsAfterFinished removed the ended benchmark's objects.
	ReasonTTLExpired = "TTLExpired"
	// ReasonClusterDeleted: the CloudNativePG Cluster the benchmark managed was deleted with it.
	ReasonClusterDeleted = "ClusterDeleted"
)

// Reasons of the Queued condition.
const (
	ReasonQueued           = "Queued"
	ReasonWaitingForServer = "WaitingForServer"
	ReasonNamespaceLimit   = "NamespaceLimit"
	ReasonClusterLimit     = "ClusterLimit"
	ReasonDequeued         = "Dequeued"
)

// Reasons of the Events that record what the operator provisioned for a transport.
const (
	ReasonGatewayCreated       = "GatewayCreated"
	ReasonPoolerCreated        = "PoolerCreated"
	ReasonProxyCreated         = "ProxyCreated"
	ReasonCertificateRequested = "CertificateRequested"
	ReasonLinkInjected         = "LinkInjected"
)

// Reasons of the warning conditions.
const (
	ReasonMeasuredLinkDiffers = "MeasuredLinkDiffers"
	ReasonMeasuredLinkHolds   = "MeasuredLinkHolds"
	ReasonClientBound         = "ClientBound"
	ReasonClientLimited       = "ClientLimited"
	ReasonNodeContention      = "NodeContention"
	ReasonTooManyFailed       = "TooManyFailed"
	ReasonTooManySkipped      = "TooManySkipped"
	ReasonBelowCycle          = "BelowCycle"
	ReasonSharedNode          = "SharedNode"
	ReasonSameNode            = "SameNode"
	ReasonTrending            = "Trending"
)

// Reasons of the Failed condition and of failure events.
const (
	ReasonServerUnreachable    = "ServerUnreachable"
	ReasonAuthenticationFailed = "AuthenticationFailed"
	ReasonConnectionRejected   = "ConnectionRejected"
	ReasonTLSError             = "TLSError"
	// ReasonClearTextPassword: the server asked for the password in clear text over a connection
	// no TLS that verified the server protects; the runner did not send it, and pgbench never ran.
	ReasonClearTextPassword   = "ClearTextPassword"
	ReasonPgbenchError        = "PgbenchError"
	ReasonJobFailed           = "JobFailed"
	ReasonTunnelDown          = "TunnelDown"
	ReasonPoolerUnavailable   = "PoolerUnavailable"
	ReasonProxyUnavailable    = "ProxyUnavailable"
	ReasonClusterNotReady     = "ClusterNotReady"
	ReasonCertificateNotReady = "CertificateNotReady"
	ReasonTimeout             = "Timeout"
	ReasonSecretNotFound      = "SecretNotFound"
	ReasonInvalidSecret       = "InvalidSecret"
	// ReasonOwnershipConflict: an object the benchmark would create already exists and belongs to
	// someone else; the operator neither uses nor deletes it.
	ReasonOwnershipConflict = "OwnershipConflict"
	// ReasonInvalidSpec: the spec asks for what the operator cannot do (caught at apply time
	// where the schema can express it).
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonUnschedulable: a pod of the benchmark found no node for longer than the bounded wait.
	ReasonUnschedulable = "Unschedulable"
	// ReasonNetworkEmulationFailed: the emulated link could not be put in place (chaos-mesh not
	// installed, or its injection failed): the run never goes ahead un-emulated.
	ReasonNetworkEmulationFailed = "NetworkEmulationFailed"
	// ReasonConnectionLost: the server, or something on the path, closed pgbench's connections
	// during the run (a restart, a failover, a killed pooler or tunnel).
	ReasonConnectionLost = "ConnectionLost"
	// ReasonStalled: no transaction completed for spec.load.stallTimeout (the path or the server
	// stopped answering without an error).
	ReasonStalled = "Stalled"
	// ReasonInvalidResult: what a pass would write into the status is refused by the CRD's own
	// schema even once every text is cut to its field (a number JSON cannot carry, a list past
	// its bound, a value outside its enum): a runner or its report wrote nonsense. The pass's
	// results are left out and the benchmark ends, rather than retry a refused write forever.
	ReasonInvalidResult = "InvalidResult"
)

// Reasons of the Regressed condition.
const (
	ReasonRegressed        = "Regressed"
	ReasonWithinHistory    = "WithinHistory"
	ReasonNotEnoughHistory = "NotEnoughHistory"
)

// Reasons of a schedule's conditions and events.
const (
	ReasonScheduled          = "Scheduled"
	ReasonSuspended          = "Suspended"
	ReasonInvalidSchedule    = "InvalidSchedule"
	ReasonRunSkipped         = "RunSkipped"
	ReasonBenchmarkCreated   = "BenchmarkCreated"
	ReasonCreateFailed       = "CreateFailed"
	ReasonHistoryUnavailable = "HistoryUnavailable"
	ReasonUpToDate           = "UpToDate"
	// ReasonInvalidStatus is the event reason of a schedule status its CRD's schema refuses.
	ReasonInvalidStatus = "InvalidStatus"
	// ReasonAuthorMayRun: at the last due time the author held every access the run needs.
	ReasonAuthorMayRun = "AuthorMayRun"
	// ReasonAuthorLacksAccess: the author lost an access the run needs; the run was not created,
	// and none is until the access is back or someone who holds it applies the spec again.
	ReasonAuthorLacksAccess = "AuthorLacksAccess"
	// ReasonNoAuthor: the schedule records no author the operator can read (made before the
	// webhook recorded one, or while it was off); applying its spec again records one.
	ReasonNoAuthor = "NoAuthor"
)
