// Package metricsauth guards the operator's metrics endpoint: a scrape must carry a bearer token
// the API server accepts (TokenReview) for a user it lets read the path (SubjectAccessReview), as
// kubebuilder's secure metrics do.
//
// It replaces controller-runtime's filters.WithAuthenticationAndAuthorization, which brings
// k8s.io/apiserver and with it a third of the operator's binary (gRPC, OpenTelemetry, CEL): 20 MB
// of code the operator would map for two API calls, and most of what kept its memory above 64 MiB.
package metricsauth

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The API server's answers are kept for a while so that a scrape every few seconds costs no API
// call each time; a refusal is kept briefly so that a newly granted role is seen soon.
const (
	allowTTL    = time.Minute
	denyTTL     = 10 * time.Second
	callTimeout = 10 * time.Second
	// maxEntries bounds the cache against a flood of distinct tokens.
	maxEntries = 1024
)

// Reviewer asks the API server who a token belongs to and whether that user may read a path.
type Reviewer interface {
	// Review returns the HTTP status a request for path with verb by the token's bearer gets
	// (200, 401 or 403) and the user's name when known.
	Review(ctx context.Context, token, verb, path string) (status int, user string, err error)
}

// Provider is a metricsserver.Options.FilterProvider.
func Provider(config *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationclient.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationclient.NewForConfigAndClient(config, httpClient)
	if err != nil {
		return nil, err
	}
	return Filter(NewCache(apiReviewer{authn: authn.TokenReviews(), authz: authz.SubjectAccessReviews()}, time.Now)), nil
}

// Filter guards a handler with a Reviewer.
func Filter(rv Reviewer) metricsserver.Filter {
	return func(log logr.Logger, handler http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			token, ok := bearer(req)
			if !ok {
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
				return
			}
			ctx, cancel := context.WithTimeout(req.Context(), callTimeout)
			defer cancel()
			status, user, err := rv.Review(ctx, token, strings.ToLower(req.Method), req.URL.Path)
			switch {
			case err != nil:
				// The error comes from the API server and never holds the token.
				log.Error(err, "Cannot review a metrics request")
				http.Error(w, "Cannot authenticate or authorize the request", http.StatusInternalServerError)
			case status == http.StatusUnauthorized:
				http.Error(w, "Unauthorized", http.StatusUnauthorized)
			case status != http.StatusOK:
				log.V(1).Info("Metrics request denied", "user", user)
				http.Error(w, "Authorization denied for user "+user, http.StatusForbidden)
			default:
				handler.ServeHTTP(w, req)
			}
		}), nil
	}
}

// bearer is the token of an "Authorization: Bearer" header.
func bearer(req *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(req.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	return token, ok && strings.EqualFold(scheme, "bearer") && token != ""
}

// apiReviewer asks the API server.
type apiReviewer struct {
	authn authenticationclient.TokenReviewInterface
	authz authorizationclient.SubjectAccessReviewInterface
}

func (a apiReviewer) Review(ctx context.Context, token, verb, path string) (int, string, error) {
	tr, err := a.authn.Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}},
		metav1.CreateOptions{})
	if err != nil {
		return 0, "", err
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized, "", nil
	}
	u := tr.Status.User
	extra := make(map[string]authorizationv1.ExtraValue, len(u.Extra))
	for k, v := range u.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := a.authz.Create(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}}, metav1.CreateOptions{})
	if err != nil {
		return 0, u.Username, err
	}
	if !sar.Status.Allowed || sar.Status.Denied {
		return http.StatusForbidden, u.Username, nil
	}
	return http.StatusOK, u.Username, nil
}

// Cache keeps a Reviewer's answers, keyed by a hash of the token (the token itself is not kept),
// the verb and the path. Errors are not kept.
type Cache struct {
	next Reviewer
	now  func() time.Time

	mu      sync.Mutex
	answers map[[sha256.Size]byte]answer
}

type answer struct {
	status  int
	user    string
	expires time.Time
}

// NewCache wraps a Reviewer; now is the clock.
func NewCache(next Reviewer, now func() time.Time) *Cache {
	return &Cache{next: next, now: now, answers: map[[sha256.Size]byte]answer{}}
}

// Review answers from the cache while the answer holds, else asks the wrapped Reviewer.
func (c *Cache) Review(ctx context.Context, token, verb, path string) (int, string, error) {
	key := sha256.Sum256([]byte(verb + " " + path + " " + token))
	now := c.now()
	c.mu.Lock()
	a, ok := c.answers[key]
	c.mu.Unlock()
	if ok && now.Before(a.expires) {
		return a.status, a.user, nil
	}
	status, user, err := c.next.Review(ctx, token, verb, path)
	if err != nil {
		return status, user, err
	}
	ttl := denyTTL
	if status == http.StatusOK {
		ttl = allowTTL
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.answers) >= maxEntries {
		c.evict(now)
	}
	c.answers[key] = answer{status: status, user: user, expires: now.Add(ttl)}
	return status, user, nil
}

// evict drops the expired answers, or all of them when none has expired.
func (c *Cache) evict(now time.Time) {
	before := len(c.answers)
	for k, a := range c.answers {
		if !now.Before(a.expires) {
			delete(c.answers, k)
		}
	}
	if len(c.answers) == before {
		clear(c.answers)
	}
}
