package runseal

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/tunnelbench/tunnelbench/internal/testing/apitest"
)

// TestEnsure: against a real API server, the first call makes the Secret with a random key, every
// later one (another replica, a restart) reads the same key, and a Secret without a usable key is
// an error that says what to do.
func TestEnsure(t *testing.T) {
	cfg := apitest.Start(t, &envtest.Environment{})
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tb-system"}}); err != nil {
		t.Fatal(err)
	}
	name := types.NamespacedName{Namespace: "tb-system", Name: "run-seal"}
	first, err := Ensure(ctx, c, name)
	if err != nil || len(first) != keySize || bytes.Equal(first, make([]byte, keySize)) {
		t.Fatalf("first: %x, %v", first, err)
	}
	again, err := Ensure(ctx, c, name)
	if err != nil || !bytes.Equal(first, again) {
		t.Fatalf("again: %x, %v; want the first key", again, err)
	}
	broken := types.NamespacedName{Namespace: "tb-system", Name: "broken"}
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: broken.Namespace, Name: broken.Name},
		Data: map[string][]byte{SecretKey: []byte("short")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Ensure(ctx, c, broken); err == nil || !strings.Contains(err.Error(), "delete it") {
		t.Errorf("a short key: %v", err)
	}
}
