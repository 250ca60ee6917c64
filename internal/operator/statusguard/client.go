package statusguard

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// Client returns c whose status writes of the project's own kinds go through Fit first: texts
// are cut to their fields, and a status the API server would refuse is not sent; the write
// returns the 422 the server would have (apierrors.IsInvalid), naming the fields. Every
// controller's SetupWithManager wraps its client with it, so that no status write of any
// controller, present or to come, skips the check.
func Client(c client.Client) client.Client {
	if _, ok := c.(guardedClient); ok || c == nil {
		return c
	}
	return guardedClient{Client: c}
}

type guardedClient struct{ client.Client }

func (g guardedClient) Status() client.SubResourceWriter {
	return guardedWriter{SubResourceWriter: g.Client.Status()}
}

type guardedWriter struct{ client.SubResourceWriter }

func (w guardedWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := check(obj); err != nil {
		return err
	}
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}

func (w guardedWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if err := check(obj); err != nil {
		return err
	}
	return w.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

// check fits obj's status when it is one of the project's kinds; any other object (a Pod's
// status in a test) is written as it is.
func check(obj client.Object) error {
	switch obj.(type) {
	case *benchv1.TunnelBenchmark, *benchv1.ScheduledTunnelBenchmark:
	default:
		return nil
	}
	if errs := Fit(obj); len(errs) > 0 {
		kind := "TunnelBenchmark"
		if _, ok := obj.(*benchv1.ScheduledTunnelBenchmark); ok {
			kind = "ScheduledTunnelBenchmark"
		}
		return apierrors.NewInvalid(schema.GroupKind{Group: benchv1.GroupVersion.Group, Kind: kind}, obj.GetName(), errs)
	}
	return nil
}
