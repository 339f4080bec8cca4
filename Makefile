# codemode — see README.md.
GO ?= go
PKGS := ./...
FUZZTIME ?= 10s
# The version stamped into the binary (codemode version, --version): the
# nearest tag, else the commit, "-dirty" when the tree has changes; "dev"
# outside a git checkout.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/codemode/codemode/internal/version.value=$(VERSION)
# pipefail: make test's status is go test's, not the summary's.
SHELL := /bin/bash -o pipefail

.PHONY: build install test bench bench-table fuzz lint cover run load

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/codemode ./cmd/codemode

# Puts codemode on PATH: into $(go env GOBIN), else $(go env GOPATH)/bin.
install:
	$(GO) install -ldflags '$(LDFLAGS)' ./cmd/codemode

# Readable output (package lines, failing tests whole), then every skipped
# test with its reason.
test:
	$(GO) build -o bin/testsummary ./cmd/testsummary
	$(GO) test -race -json $(PKGS) | bin/testsummary

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# One table: every figure beside its floor, with ratios and targets (BENCHMARKS.md).
bench-table:
	$(GO) run ./cmd/benchtable

# A short run of every fuzz target (go test -fuzz takes one target at a time).
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

cover:
	$(GO) test -cover ./registry/... ./runtime/...

run: build
	./bin/codemode serve

# 64 clients for 30 s of mixed runs against a real server on loopback.
load:
	$(GO) test ./http -run TestLoad -load -v -count=1 -timeout 10m
