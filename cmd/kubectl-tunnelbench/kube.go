package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// kube is the cluster as kubectl's flags name it: --kubeconfig, --context, -n/--namespace and
// the rest of kubectl's connection flags, read by client-go's clientcmd as kubectl reads them.
type kube struct {
	rules     *clientcmd.ClientConfigLoadingRules
	overrides clientcmd.ConfigOverrides
	config    clientcmd.ClientConfig
	c         client.Client
}

// bind declares kubectl's connection flags on fs.
func (k *kube) bind(fs *pflag.FlagSet) {
	k.rules = clientcmd.NewDefaultClientConfigLoadingRules()
	fs.StringVar(&k.rules.ExplicitPath, "kubeconfig", "", "path to the kubeconfig file")
	clientcmd.BindOverrideFlags(&k.overrides, fs, clientcmd.RecommendedConfigOverrideFlags(""))
}

func (k *kube) clientConfig() clientcmd.ClientConfig {
	if k.config == nil {
		k.config = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(k.rules, &k.overrides)
	}
	return k.config
}

func (k *kube) client() (client.Client, error) {
	if k.c != nil {
		return k.c, nil
	}
	cfg, err := k.clientConfig().ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "kubectl-tunnelbench"
	k.c, err = client.New(cfg, client.Options{Scheme: newScheme()})
	return k.c, err
}

// newScheme knows TunnelBenchmarks, the plugin's one kind.
func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	utilruntime.Must(benchv1.AddToScheme(scheme))
	return scheme
}

// namespace is -n, or the kubeconfig context's namespace.
func (k *kube) namespace() (string, error) {
	ns, _, err := k.clientConfig().Namespace()
	return ns, err
}

// key reads NAME or NAMESPACE/NAME.
func (k *kube) key(arg string) (types.NamespacedName, error) {
	if ns, name, ok := strings.Cut(arg, "/"); ok {
		return types.NamespacedName{Namespace: ns, Name: name}, nil
	}
	ns, err := k.namespace()
	return types.NamespacedName{Namespace: ns, Name: arg}, err
}

// get reads one benchmark.
func (k *kube) get(ctx context.Context, arg string) (*benchv1.TunnelBenchmark, error) {
	key, err := k.key(arg)
	if err != nil {
		return nil, err
	}
	c, err := k.client()
	if err != nil {
		return nil, err
	}
	tb := &benchv1.TunnelBenchmark{}
	if err := c.Get(ctx, key, tb); err != nil {
		return nil, fmt.Errorf("benchmark %s: %w", key, err)
	}
	return tb, nil
}
