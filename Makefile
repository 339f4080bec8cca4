# codemode — see README.md.
GO ?= go
PKGS := ./...
FUZZTIME ?= 10s

.PHONY: build test bench bench-table fuzz lint cover run load

build:
	$(GO) build -o bin/codemode ./cmd/codemode

test:
	$(GO) test -race $(PKGS)

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
