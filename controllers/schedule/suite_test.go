package schedule_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
	"github.com/tunnelbench/tunnelbench/internal/testing/benchfixture"
	"github.com/tunnelbench/tunnelbench/internal/testing/operatorenv"
	"github.com/tunnelbench/tunnelbench/test/events"
)

// The schedule's envtest suite (envtest_test.go): a real kube-apiserver and etcd with the
// project's CRDs and the operator's rights (internal/testing/operatorenv), the schedule's and
// the history's reconcilers running as the operator. No benchmark reconciler runs: the
// benchmarks a schedule creates are ended by the tests writing their status.
var (
	testCfg    *rest.Config
	testClient client.Client
	testScheme = operatorenv.Scheme()
)

func TestMain(m *testing.M) {
	os.Exit(operatorenv.Main(m, filepath.Join("..", ".."), testScheme, func(env *operatorenv.Env) {
		testCfg, testClient = env.Config, env.Client
	}))
}

func needsEnvtest(t testing.TB) {
	t.Helper()
	operatorenv.Needs(t)
}

const operatorUser = operatorenv.OperatorUser

func configAs(user string) *rest.Config { return operatorenv.ConfigAs(testCfg, user) }

func newNamespace(t *testing.T) string {
	t.Helper()
	return operatorenv.NewNamespace(t, testClient)
}

func newBenchmark(ns, name string, transports ...benchv1.TransportSpec) *benchv1.TunnelBenchmark {
	return benchfixture.New(ns, name, transports...)
}

// assertEvents waits for events of each reason on the object ns/name.
func assertEvents(t *testing.T, ns, name string, reasons ...string) {
	t.Helper()
	events.Wait(t, testClient, ns, name, 10*time.Second, reasons...)
}
