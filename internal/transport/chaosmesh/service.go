package chaosmesh

import "strings"

// ServiceOf reads a Service's name and namespace from a host of the cluster's DNS: name,
// name.namespace, name.namespace.svc or name.namespace.svc.<cluster domain>.
func ServiceOf(host, namespace string) (name, ns string, ok bool) {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	switch {
	case len(labels) == 1:
		return labels[0], namespace, labels[0] != ""
	case len(labels) == 2, len(labels) >= 3 && labels[2] == "svc":
		return labels[0], labels[1], true
	}
	return "", "", false
}
