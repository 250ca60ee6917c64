// Package specs builds the Kubernetes objects a benchmark owns. Builders are pure: they take API
// values and return objects, with no client and no context, so they are tested by value.
package specs
