package benchmark

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// CacheOptions is what the operator keeps in memory: the benchmarks, and of the Jobs and
// Deployments it watches only those it made (labelled with their benchmark), so that a big
// cluster's other Jobs and Deployments cost it nothing; all of them in the watched namespaces, or
// in every namespace when none is given.
func CacheOptions(namespaces []string) cache.Options {
	made, err := labels.NewRequirement(benchv1.LabelBenchmark, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid label key
	}
	ours := cache.ByObject{Label: labels.NewSelector().Add(*made)}
	opts := cache.Options{ByObject: map[client.Object]cache.ByObject{&batchv1.Job{}: ours, &appsv1.Deployment{}: ours}}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}
