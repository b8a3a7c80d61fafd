# Keygate: build, install and test. The Makefile only delegates: SwiftPM builds,
# scripts/secret-session gives the test suite a private Secret Service, and
# scripts/quickstart-demo runs the quick start end to end.
#
#   make build              the release CLI (Swift stdlib linked in statically)
#   make pam                the PAM module, .build/pam/pam_keygate.so (release, stripped)
#   make debug              a debug build of every product
#   make install            PREFIX=/usr/local, DESTDIR honoured (run as root); without
#                           DESTDIR, as root, also runs `keygate setup-host`
#   make uninstall
#   make man                render man/*.scd (scdoc) into .build/man/
#   make deb                a Debian package in .build/deb/ (dpkg-deb; reuses the release build)
#   make deb-check          make deb, then inspect it (dpkg-deb -c/-I) and run lintian if installed
#   make check              the whole test suite, inside a private D-Bus + gnome-keyring,
#                           after fuzz-smoke
#   make fuzz               build the libFuzzer harnesses (Fuzz/, docs/FUZZING.md) and fuzz each
#                           for FUZZ_RUNS executions (1000000) or FUZZ_SECONDS; part of stress
#   make fuzz-smoke         build the harnesses (-Onone), replay every corpus file and run a
#                           short seeded fuzz per target (FUZZ_SMOKE_RUNS, 500); part of check
#   make asan               the unit tests and the C-interop paths (crypto, kernel keyring cache,
#                           Secret Service store) under AddressSanitizer; part of stress
#   make demo               the quick start end to end (root, after make install)
#   make bench              the benchmark suite against secret-tool, libsecret and python
#                           keyring (root; ~15 min): a table and bench/results.json
#   make clean
#
# Variables: PREFIX (/usr/local), DESTDIR, SYSCONFDIR (/etc), SWIFT (swift on
# PATH, else /opt/swift/usr/bin/swift), BUILD_PATH (SwiftPM's build folder,
# default .build). The vendor policy folder is $(PREFIX)/share/keygate/policies.d;
# with PREFIX=/usr that is /usr/share/keygate/policies.d, the path DESIGN.md names.

PREFIX     ?= /usr/local
SYSCONFDIR ?= /etc
DESTDIR    ?=
BUILD_PATH ?=

SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
SWIFTC ?= $(dir $(SWIFT))swiftc
MULTIARCH ?= $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null)

BINDIR    := $(DESTDIR)$(PREFIX)/bin
PAMDIR    := $(DESTDIR)$(SYSCONFDIR)/pam.d
POLICYDIR := $(DESTDIR)$(PREFIX)/share/keygate/policies.d
MANDIR    := $(DESTDIR)$(PREFIX)/share/man
DOCDIR    := $(DESTDIR)$(PREFIX)/share/doc/keygate
BASHCOMPDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  := $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
# PAM modules go where libpam looks, whatever PREFIX is.
SECURITYDIR := $(DESTDIR)/usr/lib/$(MULTIARCH)/security
# pam-auth-update reads its profiles here only, whatever PREFIX is.
PAMCONFIGSDIR := $(DESTDIR)/usr/share/pam-configs

SWIFT_FLAGS := $(if $(BUILD_PATH),--build-path $(BUILD_PATH))
RELEASE_FLAGS := -c release --static-swift-stdlib $(SWIFT_FLAGS)

PAM_FILES    := pam.d/keygate pam.d/keygate-passcode
POLICY_FILES := $(wildcard policies/*.policy)
# Present once pam_keygate's docs land; packaged when there.
EXAMPLE_FILES := $(wildcard policies/examples/*.policy) $(wildcard pam.d/examples/*) \
                 $(wildcard contrib/systemd/*.service)

# Man pages: one source format (scdoc), rendered at build time. A troff page not
# yet converted (docs/*.[1-8]) is installed as it is.
OUT         := $(if $(BUILD_PATH),$(BUILD_PATH),.build)
MAN_OUT     := $(OUT)/man
MAN_SOURCES := $(wildcard man/*.scd)
MAN_PAGES   := $(patsubst man/%.scd,$(MAN_OUT)/%,$(MAN_SOURCES))
TROFF_PAGES := $(wildcard docs/*.[1-8])
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH

# pam_keygate.so is linked with swiftc rather than SwiftPM: one module made of the
# PAM code and only the parts of the Keygate library it uses (keys, cache, crypto,
# paths), so the .so needs libpam, libkeyutils and libsodium but not libsecret or
# glib, and carries the Swift runtime itself (-static-stdlib). exports.map keeps
# pam_sm_* the only exported symbols. Release semantics: no test hooks.
PAM_OUT     := $(if $(BUILD_PATH),$(BUILD_PATH),.build)/pam
PAM_SOURCES := $(wildcard Sources/PAMKeygate/*.swift) \
               $(foreach d,Errors Crypto Items Keys KeyringCache System Policy,$(wildcard Sources/Keygate/$(d)/*.swift)) \
               Sources/Keygate/Keychain/LoginKeys.swift
PAM_SWIFTFLAGS := -module-name PAMKeygate -package-name keygate -parse-as-library -O -wmo \
               -D KEYGATE_PAM_STANDALONE -static-stdlib -emit-library \
               -I Sources/CPAM -I Sources/CKeyutils -I Sources/CSodium \
               -Xlinker --version-script=Sources/PAMKeygate/exports.map \
               -Xlinker --gc-sections -Xlinker --as-needed \
               -Xlinker -z -Xlinker now -Xlinker -z -Xlinker relro \
               -lpam -lkeyutils -lsodium

.PHONY: all build pam man debug install uninstall check demo bench clean swift-present deb deb-check \
        fuzz fuzz-smoke asan

# Fuzzing (scripts/fuzz): its own build folders, $(OUT)/fuzz-O and $(OUT)/fuzz-Onone.
FUZZ_RUNS       ?= 1000000
FUZZ_SECONDS    ?=
FUZZ_SMOKE_RUNS ?= 500
FUZZ_ENV = SWIFTC="$(SWIFTC)" FUZZ_OUT="$(OUT)/fuzz" FUZZ_RUNS="$(FUZZ_RUNS)" FUZZ_SECONDS="$(FUZZ_SECONDS)" \
           FUZZ_SMOKE_RUNS="$(FUZZ_SMOKE_RUNS)"
# The long parts, for `make stress`: the fuzzers for their budget, then the AddressSanitizer run.
STRESS_PARTS += fuzz asan
# What `make asan` runs: the unit tests and the C-interop integration tests.
ASAN_FILTER ?= KeygateTests|KeyCacheTests|SecretServiceStoreTests|HostKeyTests
# Timing tests that ASan's 2-3x slow-down trips (not memory errors): the 100k-input policy
# property test's hang guard, warm-read latency, and the pseudo-terminal driver's deadlines.
ASAN_SKIP ?= PolicyFuzzTests|test_terminalPrompter|test_warmGet

all: build

swift-present:
	@test -x "$(SWIFT)" || command -v "$(SWIFT)" >/dev/null 2>&1 || { \
	  echo "make: no Swift toolchain (looked for swift on PATH and /opt/swift/usr/bin/swift)."; \
	  echo "      Get Swift 6 from https://www.swift.org/install/linux/ or set SWIFT=/path/to/swift."; \
	  exit 1; }

build: swift-present
	$(SWIFT) build $(RELEASE_FLAGS) --product keygate

pam: $(PAM_OUT)/pam_keygate.so

$(PAM_OUT)/pam_keygate.so: $(PAM_SOURCES) Sources/PAMKeygate/exports.map Sources/CPAM/shim.h | swift-present
	@mkdir -p $(PAM_OUT)
	$(SWIFTC) $(PAM_SWIFTFLAGS) $(PAM_SOURCES) -o $@.unstripped
	strip --strip-unneeded -o $@ $@.unstripped
	@echo "pam_keygate.so: $$(stat -c %s $@) bytes stripped"

man: $(MAN_PAGES)

$(MAN_OUT)/%: man/%.scd
	@mkdir -p $(MAN_OUT)
	@command -v scdoc >/dev/null 2>&1 || { echo "make: scdoc is missing: apt-get install scdoc (or scripts/install-deps)"; exit 1; }
	scdoc < $< > $@

debug: swift-present
	$(SWIFT) build $(SWIFT_FLAGS)

install: build pam man
	@bin="$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"; \
	echo "install -D -m 0755 $$bin/keygate $(BINDIR)/keygate"; \
	install -D -m 0755 "$$bin/keygate" "$(BINDIR)/keygate"
	install -d -m 0755 $(PAMDIR) $(POLICYDIR)
	install -m 0644 $(PAM_FILES) $(PAMDIR)/
	install -m 0644 $(POLICY_FILES) $(POLICYDIR)/
	install -D -m 0644 $(PAM_OUT)/pam_keygate.so $(SECURITYDIR)/pam_keygate.so
	@for page in $(MAN_PAGES) $(TROFF_PAGES); do \
	  sec=$${page##*.}; echo "install -D -m 0644 $$page $(MANDIR)/man$$sec/$${page##*/}"; \
	  install -D -m 0644 "$$page" "$(MANDIR)/man$$sec/$${page##*/}" || exit 1; done
	install -D -m 0644 completions/keygate.bash $(BASHCOMPDIR)/keygate
	install -D -m 0644 completions/_keygate $(ZSHCOMPDIR)/_keygate
	install -D -m 0644 completions/keygate.fish $(FISHCOMPDIR)/keygate.fish
	install -d -m 0755 $(DOCDIR)/examples
	$(if $(EXAMPLE_FILES),install -m 0644 $(EXAMPLE_FILES) $(DOCDIR)/examples/)
	install -D -m 0644 pam-configs/keygate $(PAMCONFIGSDIR)/keygate
	@echo 'pam_keygate: enable it with "sudo pam-auth-update --enable keygate", or one line per stack (pam.d/examples/)'
	@# The host key (device keys for this-device-only items) is made on the target host
	@# only: never into a staging DESTDIR, and only root can make it.
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then \
	  echo "$(BINDIR)/keygate setup-host"; \
	  "$(BINDIR)/keygate" setup-host; \
	else \
	  echo 'note: host key not created (DESTDIR is set, or not root): run "sudo keygate setup-host" on the target host.'; \
	fi

uninstall:
	@# Take the module out of common-* first, so no stack names a missing module.
	@if [ -z "$(DESTDIR)" ] && [ -f $(PAMCONFIGSDIR)/keygate ] && command -v pam-auth-update >/dev/null; then \
	  echo "pam-auth-update --package --remove keygate"; pam-auth-update --package --remove keygate; \
	fi
	rm -f $(BINDIR)/keygate
	rm -f $(SECURITYDIR)/pam_keygate.so
	rm -f $(PAMCONFIGSDIR)/keygate
	rm -f $(addprefix $(PAMDIR)/,$(notdir $(PAM_FILES)))
	rm -f $(addprefix $(POLICYDIR)/,$(notdir $(POLICY_FILES)))
	-rmdir $(POLICYDIR) $(dir $(POLICYDIR)) 2>/dev/null
	@for page in $(MAN_SOURCES:.scd=) $(TROFF_PAGES); do \
	  sec=$${page##*.}; rm -f "$(MANDIR)/man$$sec/$${page##*/}"; done
	rm -f $(BASHCOMPDIR)/keygate $(ZSHCOMPDIR)/_keygate $(FISHCOMPDIR)/keygate.fish
	rm -f $(addprefix $(DOCDIR)/examples/,$(notdir $(EXAMPLE_FILES)))
	-rmdir $(DOCDIR)/examples $(DOCDIR) 2>/dev/null

# The whole suite. `swift build` first so that the keygate binary the CLI tests
# run exists; then the tests inside a private session bus whose keyring lives
# in a temporary folder (nothing is written to HOME's keyrings). The PAM module
# tests load .build/pam/pam_keygate.so, so `pam` is built first. Its exit
# status is swift test's, so a failing test fails this target.
check: swift-present pam fuzz-smoke
	$(SWIFT) build $(SWIFT_FLAGS)
	scripts/secret-session --ephemeral $(SWIFT) test $(SWIFT_FLAGS)

# The Debian package: scripts/make-deb stages the tree (reusing the release build
# and pam_keygate.so when they are already there), then dpkg-deb builds it.
deb: build pam man
	BUILD_OUT="$(OUT)" RELEASE_BIN="$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)" \
	  PAM_SO="$(PAM_OUT)/pam_keygate.so" MULTIARCH="$(MULTIARCH)" scripts/make-deb

# Not part of `make check` (a release build is slow): builds the package, lists
# and describes it, checks its layout, and runs lintian when it is installed.
deb-check: deb
	BUILD_OUT="$(OUT)" scripts/check-deb

demo:
	scripts/quickstart-demo

fuzz: swift-present
	$(FUZZ_ENV) FUZZ_OPT=-O scripts/fuzz run

fuzz-smoke: swift-present
	$(FUZZ_ENV) scripts/fuzz smoke

# AddressSanitizer over the Swift<->C paths (libsodium, keyutils, libsecret/glib, PAM), in its
# own build folder. Too slow for every CI run (a full instrumented build): part of stress.
asan: swift-present
	$(SWIFT) build --build-path $(OUT)/asan --build-tests --sanitize=address
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 scripts/secret-session --ephemeral \
	  $(SWIFT) test --build-path $(OUT)/asan --skip-build --sanitize=address --filter '$(ASAN_FILTER)' --skip '$(ASAN_SKIP)'

# The benchmark suite (docs/PERFORMANCE.md): bench/run builds what it measures itself,
# in its own build folder (BUILD_PATH, default /tmp/keygate-bench-build).
bench: swift-present
	SWIFT="$(SWIFT)" $(if $(BUILD_PATH),BUILD_PATH="$(BUILD_PATH)") bench/run

clean:
	rm -rf $(if $(BUILD_PATH),$(BUILD_PATH),.build)
