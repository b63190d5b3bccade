// Builds ggcr-registry (main.go: go-containerregistry's pkg/registry on loopback); see ../ensure.sh.
module nodekit/registry-testbin/ggcr

go 1.26.0

require (
	github.com/go-jose/go-jose/v4 v4.1.9
	github.com/google/go-containerregistry v0.22.1
	golang.org/x/crypto v0.59.0
)
