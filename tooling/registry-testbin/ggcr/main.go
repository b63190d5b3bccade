// Command ggcr-registry serves go-containerregistry's pkg/registry (an OCI registry with the
// referrers API) on one loopback address, for tests only. pkg/registry has no authentication
// of its own, so this main puts in front of it the two schemes the distribution registry
// has, with the same challenges, error bodies and token checks: htpasswd Basic auth, and
// bearer tokens (JWTs whose key is in a JWKS file, with distribution's `access` claim).
//
//	ggcr-registry --addr 127.0.0.1:5000 [--referrers] [--blob-dir DIR]
//	  [--htpasswd FILE] [--token-realm URL --token-service NAME --token-issuer NAME --token-jwks FILE]
//	  [--tls-cert FILE --tls-key FILE] [--blob-redirect-addr 127.0.0.1:5001]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/crypto/bcrypt"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:5000", "address to listen on (loopback only)")
	referrers := flag.Bool("referrers", false, "serve the OCI referrers API")
	blobDir := flag.String("blob-dir", "", "keep blobs in this directory (default: in memory); blobs are served as stored, unverified, so tests can tamper with them")
	htpasswd := flag.String("htpasswd", "", "require Basic auth against this bcrypt htpasswd file")
	realm := flag.String("token-realm", "", "require bearer tokens from this token endpoint")
	service := flag.String("token-service", "", "the service (audience) tokens must name")
	issuer := flag.String("token-issuer", "", "the issuer tokens must name")
	jwksFile := flag.String("token-jwks", "", "JWKS file holding the token signing keys")
	tlsCert := flag.String("tls-cert", "", "serve HTTPS with this certificate")
	tlsKey := flag.String("tls-key", "", "and this key")
	redirectAddr := flag.String("blob-redirect-addr", "", "answer blob GETs with a 307 to this second (cross-origin) address, which serves the blob store without auth, as registries do with object storage")
	flag.Parse()

	host, _, err := net.SplitHostPort(*addr)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		log.Fatalf("--addr must be a loopback address, got %q", *addr)
	}

	var blobs blobStore = memStore{mu: &sync.RWMutex{}, m: map[string][]byte{}}
	if *blobDir != "" {
		blobs = diskStore{dir: *blobDir}
	}
	scheme := "http"
	if *tlsCert != "" {
		scheme = "https"
	}
	opts := []registry.Option{registry.WithReferrersSupport(*referrers), registry.Logger(log.New(io.Discard, "", 0))}
	if *redirectAddr != "" {
		opts = append(opts, registry.WithBlobHandler(redirecting{blobStore: blobs, base: fmt.Sprintf("%s://%s", scheme, *redirectAddr)}))
		go serve(*redirectAddr, storageHandler(blobs), *tlsCert, *tlsKey)
	} else {
		opts = append(opts, registry.WithBlobHandler(plain{blobs}))
	}
	var handler http.Handler = registry.New(opts...)

	switch {
	case *htpasswd != "":
		users, err := readHtpasswd(*htpasswd)
		if err != nil {
			log.Fatal(err)
		}
		handler = basicAuth(users, handler)
	case *realm != "":
		keys, err := readJWKS(*jwksFile)
		if err != nil {
			log.Fatal(err)
		}
		handler = tokenAuth(tokenConfig{realm: *realm, service: *service, issuer: *issuer, keys: keys}, handler)
	}

	go serve(*addr, handler, *tlsCert, *tlsKey)
	fmt.Fprintf(os.Stderr, "listening on %s://%s\n", scheme, *addr)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	<-signals
}

func serve(addr string, handler http.Handler, cert, key string) {
	server := &http.Server{Addr: addr, Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	var err error
	if cert != "" {
		err = server.ListenAndServeTLS(cert, key)
	} else {
		err = server.ListenAndServe()
	}
	log.Fatal(err)
}

// ---- blob storage -------------------------------------------------------------------------

type blobStore interface {
	get(digest string) ([]byte, bool)
	put(digest string, data []byte) error
}

type memStore struct {
	mu *sync.RWMutex
	m  map[string][]byte
}

func (s memStore) get(digest string) ([]byte, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	b, ok := s.m[digest]
	return b, ok
}
func (s memStore) put(digest string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[digest] = data
	return nil
}

// diskStore keeps each blob at DIR/<algorithm>/<hex>, as pkg/registry's own disk handler does.
type diskStore struct{ dir string }

func (s diskStore) path(digest string) string {
	algorithm, hex, _ := strings.Cut(digest, ":")
	return filepath.Join(s.dir, algorithm, hex)
}
func (s diskStore) get(digest string) ([]byte, bool) {
	b, err := os.ReadFile(s.path(digest))
	return b, err == nil
}
func (s diskStore) put(digest string, data []byte) error {
	p := s.path(digest)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// plain is a BlobHandler over a blobStore.
type plain struct{ blobStore }

func (p plain) Get(_ context.Context, _ string, h v1.Hash) (io.ReadCloser, error) {
	b, ok := p.get(h.String())
	if !ok {
		return nil, registry.ErrNotFound
	}
	return io.NopCloser(strings.NewReader(string(b))), nil
}
func (p plain) Stat(_ context.Context, _ string, h v1.Hash) (int64, error) {
	b, ok := p.get(h.String())
	if !ok {
		return 0, registry.ErrNotFound
	}
	return int64(len(b)), nil
}
func (p plain) Put(_ context.Context, _ string, h v1.Hash, rc io.ReadCloser) error {
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return err
	}
	return p.put(h.String(), b)
}

// redirecting answers blob GETs with a redirect to the storage listener; HEAD stays local.
type redirecting struct {
	blobStore
	base string
}

func (r redirecting) Get(_ context.Context, _ string, h v1.Hash) (io.ReadCloser, error) {
	if _, ok := r.get(h.String()); !ok {
		return nil, registry.ErrNotFound
	}
	return nil, registry.RedirectError{Location: r.base + "/blobs/" + h.String(), Code: http.StatusTemporaryRedirect}
}
func (r redirecting) Stat(ctx context.Context, repo string, h v1.Hash) (int64, error) {
	return plain{r.blobStore}.Stat(ctx, repo, h)
}
func (r redirecting) Put(ctx context.Context, repo string, h v1.Hash, rc io.ReadCloser) error {
	return plain{r.blobStore}.Put(ctx, repo, h, rc)
}

// storageHandler is the "object storage" a redirect points at. It records whether the
// request carried an Authorization header (it must not: the header was for the registry).
func storageHandler(blobs blobStore) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Authorization") != "" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, "storage: refused a request that carried the registry's Authorization header")
			return
		}
		b, ok := blobs.get(strings.TrimPrefix(req.URL.Path, "/blobs/"))
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(b)
	})
}

// ---- authentication -----------------------------------------------------------------------

// writeError answers as distribution does: an errors body, and the challenge header.
func writeError(w http.ResponseWriter, status int, challenge, code, message string) {
	w.Header().Set("WWW-Authenticate", challenge)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]any{{"code": code, "message": message, "detail": nil}}})
}

func readHtpasswd(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	users := map[string][]byte{}
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		user, hash, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%s: malformed line", path)
		}
		users[user] = []byte(hash)
	}
	return users, scanner.Err()
}

func basicAuth(users map[string][]byte, next http.Handler) http.Handler {
	const challenge = `Basic realm="ggcr-registry"`
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		user, password, ok := req.BasicAuth()
		if !ok {
			writeError(w, http.StatusUnauthorized, challenge, "UNAUTHORIZED", "authentication required")
			return
		}
		hash, known := users[user]
		if !known || bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil {
			writeError(w, http.StatusUnauthorized, challenge, "UNAUTHORIZED", "invalid username or password")
			return
		}
		next.ServeHTTP(w, req)
	})
}

type tokenConfig struct {
	realm, service, issuer string
	keys                   *jose.JSONWebKeySet
}

func readJWKS(path string) (*jose.JSONWebKeySet, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(set.Keys) == 0 {
		return nil, errors.New(path + ": no keys")
	}
	return &set, nil
}

type accessEntry struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Actions []string `json:"actions"`
}

type claims struct {
	jwt.Claims
	Access []accessEntry `json:"access"`
}

// repositoryOf takes the repository name from /v2/<name>/{manifests,blobs,tags,referrers}/...
func repositoryOf(path string) string {
	rest := strings.TrimPrefix(path, "/v2/")
	for _, marker := range []string{"/manifests/", "/blobs/", "/tags/", "/referrers/"} {
		if i := strings.LastIndex(rest, marker); i > 0 {
			return rest[:i]
		}
	}
	return ""
}

func tokenAuth(config tokenConfig, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		repo := repositoryOf(req.URL.Path)
		actions := []string{"pull"}
		switch req.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodDelete:
			actions = []string{"delete"}
		default:
			actions = []string{"pull", "push"}
		}
		challenge := fmt.Sprintf(`Bearer realm=%q,service=%q`, config.realm, config.service)
		if repo != "" {
			challenge += fmt.Sprintf(`,scope="repository:%s:%s"`, repo, strings.Join(actions, ","))
		}
		prefix, raw, _ := strings.Cut(req.Header.Get("Authorization"), " ")
		if !strings.EqualFold(prefix, "bearer") || raw == "" {
			writeError(w, http.StatusUnauthorized, challenge, "UNAUTHORIZED", "authentication required")
			return
		}
		token, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256, jose.RS256})
		if err != nil || len(token.Headers) == 0 {
			writeError(w, http.StatusUnauthorized, challenge+`,error="invalid_token"`, "UNAUTHORIZED", "invalid token")
			return
		}
		keys := config.keys.Key(token.Headers[0].KeyID)
		var got claims
		if len(keys) == 0 || token.Claims(keys[0].Key, &got) != nil {
			writeError(w, http.StatusUnauthorized, challenge+`,error="invalid_token"`, "UNAUTHORIZED", "invalid token")
			return
		}
		expected := jwt.Expected{Issuer: config.issuer, AnyAudience: jwt.Audience{config.service}, Time: time.Now()}
		if got.ValidateWithLeeway(expected, 60*time.Second) != nil {
			writeError(w, http.StatusUnauthorized, challenge+`,error="invalid_token"`, "UNAUTHORIZED", "invalid token")
			return
		}
		if repo != "" && !granted(got.Access, repo, actions) {
			writeError(w, http.StatusUnauthorized, challenge+`,error="insufficient_scope"`, "DENIED", "requested access to the resource is denied")
			return
		}
		next.ServeHTTP(w, req)
	})
}

func granted(access []accessEntry, repo string, actions []string) bool {
	have := map[string]bool{}
	for _, entry := range access {
		if entry.Type == "repository" && entry.Name == repo {
			for _, action := range entry.Actions {
				have[action] = true
			}
		}
	}
	for _, action := range actions {
		if !have[action] && !have["*"] {
			return false
		}
	}
	return true
}
