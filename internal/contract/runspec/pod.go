package runspec

import (
	"fmt"
	"path"
)

// Names and paths of the runner pod. The operator writes them into the pod spec and the runner,
// or its ssh sidecars, open them: a rename on one side only would break the pod at run time,
// never at compile time, hence one definition here. Paths are the Linux container's.
const (
	// RunnerContainerName is the name of the container that runs pgbench; the operator reads its
	// termination message.
	RunnerContainerName = "runner"
	// TmpVolume is the writable, memory-backed volume of the runner pod (its root filesystem is
	// read-only), mounted at TmpMountPath; HOME points there too.
	TmpVolume    = "tmp"
	TmpMountPath = "/tmp"
	// ScriptEnv is the environment variable that carries an inline pgbench script (Load.Script):
	// the text may be long and is no flag's business.
	ScriptEnv = "TUNNELBENCH_SCRIPT"
	// ScriptPath is where the runner writes the inline script before pgbench reads it (-f).
	ScriptPath = TmpMountPath + "/tunnelbench/script.sql"
	// TransactionLogDir is where pgbench writes its per-transaction logs (-l), read into the
	// latency histogram and removed after each run.
	TransactionLogDir = TmpMountPath + "/tunnelbench/transactions"
	// APIAccessVolume holds the runner's Kubernetes API credentials (a short-lived token of its
	// ServiceAccount, the API's CA and the namespace), mounted at APIAccessPath in the runner
	// container only: the sidecars get none.
	APIAccessVolume = "kube-api-access"
	APIAccessPath   = "/var/run/secrets/kubernetes.io/serviceaccount"
	// ResultKey is the key of the result ConfigMap under which the runner stores its report.
	ResultKey = "report.json"
	// StormScriptPath is where the runner writes the connection storm's script.
	StormScriptPath = TmpMountPath + "/tunnelbench/storm.sql"
	// TunnelBasePort is the loopback port of the first SSH tunnel; tunnel i listens on base+i.
	TunnelBasePort = 15432
	// SSHClientDir holds the ssh client's key and the pinned known_hosts.
	SSHClientDir = "/etc/tunnelbench/ssh"
	// SSHLogDir is shared by the tunnel sidecars (which write ssh's -v log) and the runner (which
	// reads the negotiated algorithms and the reason a tunnel died).
	SSHLogDir = "/run/tunnelbench/ssh"
)

// TunnelLogFile is the ssh -v log of tunnel i in dir (SSHLogDir in the pod).
func TunnelLogFile(dir string, i int) string {
	return path.Join(dir, fmt.Sprintf("tunnel-%d.log", i))
}
