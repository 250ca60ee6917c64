// Package runseal proves that a benchmark is a run a schedule's controller made. Its labels and
// owner reference say which schedule it belongs to, but anyone who may create benchmarks in the
// namespace can write those: a benchmark of their own, labelled as a schedule's run, would join
// that schedule's history and judgements, and hide a regression or fake one. So the controller
// seals each run it creates: an HMAC-SHA256, under a key only the operator reads (a Secret of its
// namespace), over what makes it that schedule's run (namespace, name, the schedule's name and UID,
// the template's hash). Whatever does not carry a valid seal is nobody's run.
package runseal

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	benchv1 "github.com/tunnelbench/tunnelbench/api/v1alpha1"
)

// Key seals and checks runs. A zero Key seals nothing and finds every seal invalid.
type Key []byte

// keySize is the key's length in bytes: SHA-256's block is 64, its output 32; 32 random bytes
// are as strong as the MAC.
const keySize = 32

// SecretKey is the data key of the Secret that holds the Key.
const SecretKey = "key"

// Seal is the seal of tb as a run of the schedule named scheduleName with UID scheduleUID; tb's
// labels name the template's hash.
func (k Key) Seal(tb *benchv1.TunnelBenchmark, scheduleName string, scheduleUID types.UID) string {
	mac := hmac.New(sha256.New, k)
	for _, part := range []string{"tunnelbench run seal v1", tb.Namespace, tb.Name, scheduleName, string(scheduleUID),
		tb.Labels[benchv1.LabelTemplateHash]} {
		// Each part with its length: no two different lists of parts hash the same text.
		_, _ = fmt.Fprintf(mac, "%d:%s;", len(part), part)
	}
	return hex.EncodeToString(mac.Sum(nil))
}

// ScheduleOf is the schedule tb is a sealed run of: its controller owner, a
// ScheduledTunnelBenchmark named as its schedule label, and a seal that matches. ok is false for
// a benchmark that is no schedule's run, or claims to be one without the seal to prove it.
func (k Key) ScheduleOf(tb *benchv1.TunnelBenchmark) (name string, uid types.UID, ok bool) {
	if len(k) == 0 {
		return "", "", false
	}
	ref := metav1.GetControllerOf(tb)
	if ref == nil || ref.Kind != "ScheduledTunnelBenchmark" || ref.APIVersion != benchv1.GroupVersion.String() ||
		tb.Labels[benchv1.LabelSchedule] != ref.Name {
		return "", "", false
	}
	got, err := hex.DecodeString(tb.Annotations[benchv1.AnnotationRunSeal])
	if err != nil {
		return "", "", false
	}
	want, _ := hex.DecodeString(k.Seal(tb, ref.Name, ref.UID))
	if !hmac.Equal(got, want) {
		return "", "", false
	}
	return ref.Name, ref.UID, true
}

// Ensure reads the Key from the Secret named, creating it with a random key when there is none;
// of two operators creating it at once, the one that loses reads the winner's.
func Ensure(ctx context.Context, c client.Client, name types.NamespacedName) (Key, error) {
	secret := &corev1.Secret{}
	err := c.Get(ctx, name, secret)
	if apierrors.IsNotFound(err) {
		key := make([]byte, keySize)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("cannot make the run seal's key: %w", err)
		}
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name,
			Labels: map[string]string{"app.kubernetes.io/name": "tunnelbench", "app.kubernetes.io/component": "run-seal"}},
			Type: corev1.SecretTypeOpaque, Data: map[string][]byte{SecretKey: key}}
		err = c.Create(ctx, secret)
		if apierrors.IsAlreadyExists(err) {
			err = c.Get(ctx, name, secret)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read or create the run seal's Secret %s: %w", name, err)
	}
	key := secret.Data[SecretKey]
	if len(key) < keySize {
		return nil, errors.New("the run seal's Secret " + name.String() + " holds no key of 32 bytes or more under " + SecretKey +
			": delete it, and the operator makes a new one (the runs sealed with the old key then belong to no schedule)")
	}
	return Key(key), nil
}
