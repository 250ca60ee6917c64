package metricsauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/tunnelbench/tunnelbench/internal/testing/apitest"
)

// serviceAccountToken creates a service account and returns a token of it; with reader, the
// account may get /metrics.
func serviceAccountToken(t *testing.T, cs kubernetes.Interface, name string, reader bool) string {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if reader {
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: name}}}
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// countingReviewer counts the reviews that reach the API server.
type countingReviewer struct {
	Reviewer
	calls atomic.Int32
}

func (c *countingReviewer) Review(ctx context.Context, token, verb, path string) (int, string, error) {
	c.calls.Add(1)
	return c.Reviewer.Review(ctx, token, verb, path)
}

// TestFilter: against a real API server, only a token of a user allowed to get /metrics reaches
// the metrics; others get 401 (no or unknown token) or 403 (known, not allowed), and answers are
// kept for their time.
func TestFilter(t *testing.T) {
	cfg := apitest.Start(t, &envtest.Environment{})
	cs := kubernetes.NewForConfigOrDie(cfg)
	reader := serviceAccountToken(t, cs, "prometheus", true)
	stranger := serviceAccountToken(t, cs, "stranger", false)

	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	provided, err := Provider(cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	api := &countingReviewer{Reviewer: uncachedReviewer(t, cfg)}
	clock := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	cache := NewCache(api, func() time.Time { return clock })
	var served atomic.Int32
	metrics := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		_, _ = w.Write([]byte("tunnelbench_up 1\n"))
	})
	for name, filter := range map[string]func(logr.Logger, http.Handler) (http.Handler, error){
		"provider": provided, "cached": Filter(cache),
	} {
		h, err := filter(logr.Discard(), metrics)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		tests := []struct {
			name, path, auth string
			want             int
		}{
			{"no token", "/metrics", "", http.StatusUnauthorized},
			{"not a bearer token", "/metrics", "Basic " + reader, http.StatusUnauthorized},
			{"unknown token", "/metrics", "Bearer not-a-token", http.StatusUnauthorized},
			{"allowed reader", "/metrics", "Bearer " + reader, http.StatusOK},
			{"allowed reader, scheme in lower case", "/metrics", "bearer " + reader, http.StatusOK},
			{"reader on another path", "/debug", "Bearer " + reader, http.StatusForbidden},
			{"known but not allowed", "/metrics", "Bearer " + stranger, http.StatusForbidden},
		}
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				before := served.Load()
				req, _ := http.NewRequest(http.MethodGet, srv.URL+tt.path, nil)
				if tt.auth != "" {
					req.Header.Set("Authorization", tt.auth)
				}
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				if resp.StatusCode != tt.want {
					t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
				}
				if reached := served.Load() > before; reached != (tt.want == http.StatusOK) {
					t.Errorf("the metrics handler reached: %v, want %v", reached, tt.want == http.StatusOK)
				}
			})
		}
		srv.Close()
	}

	// The cached filter asked the API server once per token and path (the lower-case scheme
	// was answered from the cache).
	if got := api.calls.Load(); got != 4 {
		t.Errorf("%d reviews reached the API server, want 4", got)
	}
	ctx := context.Background()
	for _, tt := range []struct {
		name      string
		token     string
		after     time.Duration
		wantCalls int32
	}{
		{"a refusal expires after denyTTL", stranger, denyTTL, 5},
		{"an allowed answer is kept longer", reader, 0, 5},
		{"an allowed answer expires after allowTTL", reader, allowTTL - denyTTL, 6},
	} {
		clock = clock.Add(tt.after)
		if _, _, err := cache.Review(ctx, tt.token, "get", "/metrics"); err != nil {
			t.Fatal(err)
		}
		if got := api.calls.Load(); got != tt.wantCalls {
			t.Errorf("%s: %d reviews reached the API server, want %d", tt.name, got, tt.wantCalls)
		}
	}
}

// uncachedReviewer is the reviewer the Provider puts behind its cache.
func uncachedReviewer(t *testing.T, cfg *rest.Config) Reviewer {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(cfg)
	return apiReviewer{authn: cs.AuthenticationV1().TokenReviews(), authz: cs.AuthorizationV1().SubjectAccessReviews()}
}

// TestCacheBound: a flood of distinct tokens cannot grow the cache past maxEntries.
func TestCacheBound(t *testing.T) {
	refuse := reviewerFunc(func(context.Context, string, string, string) (int, string, error) {
		return http.StatusUnauthorized, "", nil
	})
	clock := time.Unix(0, 0)
	c := NewCache(refuse, func() time.Time { return clock })
	for i := range 3 * maxEntries {
		if _, _, err := c.Review(context.Background(), string(rune(i))+"token", "get", "/metrics"); err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 {
			clock = clock.Add(time.Second)
		}
	}
	if n := len(c.answers); n > maxEntries || n == 0 {
		t.Errorf("%d answers kept, want 1..%d", n, maxEntries)
	}
}

type reviewerFunc func(ctx context.Context, token, verb, path string) (int, string, error)

func (f reviewerFunc) Review(ctx context.Context, token, verb, path string) (int, string, error) {
	return f(ctx, token, verb, path)
}
