# Keygate: build, install and test. The Makefile only delegates: SwiftPM builds,
# scripts/secret-session gives the test suite a private Secret Service, and
# scripts/quickstart-demo runs the quick start end to end.
#
#   make build              the release CLI, keygate-gatekeeper and keygate-pam-helper (Swift stdlib
#                           linked in statically)
#   make pam                the PAM module, .build/pam/pam_keygate.so (Embedded Swift, stripped;
#                           it starts $(PREFIX)/libexec/keygate/keygate-pam-helper), and the
#                           release keygate-pam-helper
#   make debug              a debug build of every product
#   make install            PREFIX=/usr/local, DESTDIR honoured (run as root); without
#                           DESTDIR, as root, also runs `keygate setup-host`. Installs the
#                           gatekeeper setuid root: $(PREFIX)/libexec/keygate/keygate-gatekeeper, 4755
#   make uninstall          removes what make install installed (INSTALL_LIST, the one list)
#   make install-list       the files make install installs, one a line (under DESTDIR)
#   make man                render man/*.scd (scdoc) into .build/man/
#   make deb                a Debian package in .build/deb/ (dpkg-deb; reuses the release build;
#                           staged by make install DESTDIR=... PREFIX=/usr)
#   make deb-check          make deb, then inspect it (dpkg-deb -c/-I) and run lintian (an error fails it)
#   make deb-install-check  make deb, then install, reinstall, remove and purge it in a fresh
#                           debootstrap chroot (root and network; scripts/check-deb-install)
#   make check              fuzz-smoke, then the whole test suite (debug build), inside a private
#                           D-Bus + gnome-keyring (as root, but the tests the release pass runs:
#                           make debug-pass-skip); then the store flows again against the embedded
#                           store (KEYGATE_STORE=embedded; the classes that declare
#                           OutsideTheEmbeddedPass stay out: make embedded-pass-skip); then check-release
#   make check-release      (root) make install, then the pseudo-terminal tests of every prompting
#                           verb against the installed release binary
#   make stress             the long reliability runs (docs/SECURITY.md): kill loops, races,
#                           dying dependencies with big numbers (root; STRESS_* below)
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
POLICYDIR := $(DESTDIR)$(PREFIX)/share/keygate/policies.d
DOCDIR    := $(DESTDIR)$(PREFIX)/share/doc/keygate
LIBEXECDIR := $(DESTDIR)$(PREFIX)/libexec/keygate
# pam-auth-update reads its profiles here only, whatever PREFIX is.
PAMCONFIGSDIR := $(DESTDIR)/usr/share/pam-configs

SWIFT_FLAGS := $(if $(BUILD_PATH),--build-path $(BUILD_PATH))
# lld with packed relative relocations (DT_RELR, glibc >= 2.36): the static Swift runtime's
# ~37,000 relative relocations become a few hundred RELR words, so ld.so does less at every
# start (docs/PERFORMANCE.md). RELEASE_LINK_FLAGS= (empty) links with the default linker.
#
# The C++ runtime under the static Swift runtime is linked statically too: the Swift driver
# asks for -lstdc++, and STATIC_CXX_DIR, searched first, answers with a linker script naming
# GCC's libstdc++.a, so ld.so resolves none of libstdc++.so's symbols at each start (its
# ~4,300 symbol relocations were most of what `keygate --version` still spent in ld.so). The
# static Swift runtime's own link arguments keep archive symbols unexported (--exclude-libs
# ALL). Without a libstdc++.a (`cc -print-file-name=libstdc++.a` finds none) the shared one is used.
STATIC_CXX_ARCHIVE := $(shell $(CC) -print-file-name=libstdc++.a 2>/dev/null)
STATIC_CXX_DIR      = $(abspath $(OUT))/static-libstdc++
STATIC_CXX_FLAGS    = $(if $(filter /%,$(STATIC_CXX_ARCHIVE)),-Xswiftc -L$(STATIC_CXX_DIR))
# Bound at start (-z now): with lazy binding ld.so leaves .got.plt writable for the life of the
# process, outside RELRO; bound at once it is read-only before main, so no write can redirect a
# call (full RELRO). This matters most in the setuid gatekeeper and the login helper, which run as
# root; it costs each start a lookup of every imported function (docs/DECISIONS.md).
RELEASE_LINK_FLAGS ?= -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs -Xlinker -z -Xlinker now $(STATIC_CXX_FLAGS)
# No RUNPATH of $ORIGIN (SwiftPM's default): keygate loads nothing from its own folder, and ld.so
# would probe ~16 paths under it at every start and dlopen.
# No dynamic symbol table of our own (--no-export-dynamic, after the driver's --export-dynamic):
# nothing loads into these programs and links against them, and ld.so and the runtime's dladdr
# walked ~3,950 exported Swift symbols at every start (126,000 instructions of `keygate --version`'s
# 1.75 M). It also leaves the setuid gatekeeper no exported symbol to interpose on.
RELEASE_EXPORT_FLAGS := -Xlinker --no-export-dynamic
# Type metadata reached through accessor functions, not mangled names: a generic type's first use
# then gets its conformances from the caller instead of demangling the name and scanning every
# conformance record for them (0.64 M of keygate-pam-helper's 18.2 M instructions at each login,
# docs/DECISIONS.md). The same metadata, a few KB more code.
RELEASE_METADATA_FLAGS := -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors
RELEASE_FLAGS = -c release --static-swift-stdlib --disable-local-rpath $(RELEASE_LINK_FLAGS) $(RELEASE_EXPORT_FLAGS) \
                $(RELEASE_METADATA_FLAGS) $(SWIFT_FLAGS)

# Programs and libraries are installed as dpkg installs them: written beside the target, then
# renamed over it, so a running upgrade never leaves a moment with no file or half of one
# (a program starting the gatekeeper then finds the old one or the new one).
INSTALL_ATOMIC := scripts/install-atomic

PAM_FILES    := pam.d/keygate pam.d/keygate-passcode pam.d/keygate-biometry
# The names git, docker and ssh-add look for: each a two-line wrapper that execs a keygate verb
# (docs/INTEGRATIONS.md), installed beside keygate.
HELPER_FILES := contrib/helpers/git-credential-keygate contrib/helpers/docker-credential-keygate \
                contrib/helpers/keygate-ssh-askpass
POLICY_FILES := $(wildcard policies/*.policy)
# The Python keyring backend (contrib/python, docs/INTEGRATIONS.md): the package and its
# .dist-info (entry_points.txt: keyring finds backends through the keyring.backends entry
# point), into the folder the system's python3 imports from under PREFIX. Debian's python3
# reads /usr/lib/python3/dist-packages (the .deb's, PREFIX=/usr) and
# /usr/local/lib/python3.X/dist-packages, not /usr/local/lib/python3/dist-packages.
PYTHON3       ?= $(firstword $(wildcard /usr/bin/python3) python3)
PYTHON_SITE   ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(shell $(PYTHON3) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo 3)/dist-packages)
PYTHONDIR     := $(DESTDIR)$(PYTHON_SITE)
PYTHON_BACKEND := contrib/python/keyrings/keygate/__init__.py
PYTHON_DISTINFO := $(notdir $(wildcard contrib/python/*.dist-info))
# Present once pam_keygate's docs land; packaged when there.
EXAMPLE_FILES := $(wildcard policies/examples/*.policy) $(wildcard pam.d/examples/*)
# systemd units, written with the install's paths in place of @BINDIR@ and @LIBEXECDIR@:
# examples (contrib/systemd/*.service, into the doc folder) and the gatekeeper's socket and
# service (contrib/systemd/system/, into $(PREFIX)/lib/systemd/system, which systemd reads).
UNIT_FILES    := $(wildcard contrib/systemd/*.service)
SYSTEM_UNIT_FILES := $(wildcard contrib/systemd/system/*)

# Man pages: one source format (scdoc), rendered at build time.
OUT         := $(if $(BUILD_PATH),$(BUILD_PATH),.build)
MAN_OUT     := $(OUT)/man
MAN_SOURCES := $(wildcard man/*.scd)
MAN_PAGES   := $(patsubst man/%.scd,$(MAN_OUT)/%,$(MAN_SOURCES))
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || date +%s)
export SOURCE_DATE_EPOCH

# pam_keygate.so is the thin module: Sources/PAMKeygateModule in Embedded Swift
# (no Foundation, no Swift runtime library: what it uses is compiled into it), linked with
# libpam and libc only, about 40 KB. It counts sessions itself and starts keygate-pam-helper
# (SwiftPM, the Keygate library: KDF, unwrap, keyring, lock) for auth and chauthtok, with the
# password on a pipe, and for a session only to unlock at open or lock at the last close;
# the helper's installed path is compiled in (KEYGATE_PAM_HELPER; `helper=PATH` on the PAM
# line overrides it, as the tests do). exports.map keeps pam_sm_* the only exported symbols.
PAM_OUT     ?= $(if $(BUILD_PATH),$(BUILD_PATH),.build)/pam
PAM_HELPER  ?= $(PREFIX)/libexec/keygate/keygate-pam-helper
PAM_SOURCES := $(wildcard Sources/PAMKeygateModule/*.swift)
PAM_SWIFTFLAGS := -enable-experimental-feature Embedded -wmo -parse-as-library -Osize -emit-library \
               -module-name PAMKeygateModule -I Sources/CPAMModule -Xcc -DKEYGATE_PAM_HELPER='"$(PAM_HELPER)"' \
               -Xlinker --version-script=Sources/PAMKeygateModule/exports.map \
               -Xlinker --gc-sections -Xlinker --as-needed \
               -Xlinker -z -Xlinker now -Xlinker -z -Xlinker relro -lpam

.PHONY: all build static-cxx pam man debug install install-list uninstall embedded-pass-skip debug-pass-skip check check-release stress demo bench bench-login clean swift-present deb deb-maintainer deb-check \
        deb-install-check fuzz fuzz-smoke asan

# Fuzzing (scripts/fuzz): its own build folders, $(OUT)/fuzz-O and $(OUT)/fuzz-Onone.
FUZZ_RUNS       ?= 1000000
FUZZ_SECONDS    ?=
FUZZ_SMOKE_RUNS ?= 500
# `make fuzz FUZZ_TARGETS=gatekeeper-request`: only those targets (default: every one).
FUZZ_TARGETS    ?=
FUZZ_ENV = SWIFTC="$(SWIFTC)" FUZZ_OUT="$(OUT)/fuzz" FUZZ_RUNS="$(FUZZ_RUNS)" FUZZ_SECONDS="$(FUZZ_SECONDS)" \
           FUZZ_SMOKE_RUNS="$(FUZZ_SMOKE_RUNS)"
# The long parts that are make targets, for `make stress`: the fuzzers for their budget, then
# the AddressSanitizer run.
STRESS_TARGETS ?= fuzz asan
# What `make asan` runs: the unit tests and the C-interop integration tests, with the item-store
# contract (ItemStoreMatrixTests' contract checks, on every store kind), not the provider
# matrix's daemon-killing checks.
ASAN_FILTER ?= KeygateTests|KeyCacheTests|SecretServiceStoreTests|HostKeyTests|ItemStoreMatrixTests/(search|label|replace|create_|synchronizable|delete)
# Timing tests that ASan's 2-3x slow-down trips (not memory errors): the 100k-input policy
# property test's hang guard, warm-read latency, and the pseudo-terminal driver's deadlines.
ASAN_SKIP ?= PolicyFuzzTests|test_terminalPrompter|test_warmGet

all: build

swift-present:
	@test -x "$(SWIFT)" || command -v "$(SWIFT)" >/dev/null 2>&1 || { \
	  echo "make: no Swift toolchain (looked for swift on PATH and /opt/swift/usr/bin/swift)."; \
	  echo "      Get Swift 6 from https://www.swift.org/install/linux/ or set SWIFT=/path/to/swift."; \
	  exit 1; }

build: swift-present static-cxx
	$(SWIFT) build $(RELEASE_FLAGS) --product keygate
	$(SWIFT) build $(RELEASE_FLAGS) --product keygate-gatekeeper
	$(SWIFT) build $(RELEASE_FLAGS) --product keygate-pam-helper
	$(SWIFT) build $(RELEASE_FLAGS) --product keygate-secret-service

static-cxx:
	@$(if $(STATIC_CXX_FLAGS),mkdir -p $(STATIC_CXX_DIR) && echo 'INPUT($(STATIC_CXX_ARCHIVE))' > $(STATIC_CXX_DIR)/libstdc++.so,true)

# The module and the release helper it starts (the tests point the module at this helper
# with helper=; `make install` and the .deb install the same build).
pam: $(PAM_OUT)/pam_keygate.so static-cxx
	$(SWIFT) build $(RELEASE_FLAGS) --product keygate-pam-helper

$(PAM_OUT)/pam_keygate.so: $(PAM_SOURCES) Sources/PAMKeygateModule/exports.map $(wildcard Sources/CPAMModule/*.h) | swift-present
	@mkdir -p $(PAM_OUT)
	$(SWIFTC) $(PAM_SWIFTFLAGS) $(PAM_SOURCES) -o $@.unstripped
	strip --strip-unneeded -o $@ $@.unstripped
	@echo "pam_keygate.so: $$(stat -c %s $@) bytes stripped (helper: $(PAM_HELPER))"

man: $(MAN_PAGES)

$(MAN_OUT)/%: man/%.scd
	@mkdir -p $(MAN_OUT)
	@command -v scdoc >/dev/null 2>&1 || { echo "make: scdoc is missing: apt-get install scdoc (or scripts/install-deps)"; exit 1; }
	scdoc < $< > $@

debug: swift-present
	$(SWIFT) build $(SWIFT_FLAGS)

# What `make install` installs, one entry a file: KIND:SOURCE:TARGET, TARGET under $(DESTDIR).
# The only list: `install` installs it, `uninstall` removes it, scripts/make-deb stages the
# .deb with `make install DESTDIR=... PREFIX=/usr`, and `make install-list` prints it (the
# tests and scripts/check-deb read that). KIND: program (0755) and setuid (4755, root's when
# root installs) and library (0644), each written beside and renamed (INSTALL_ATOMIC); data
# (0644, install(1)); unit (0644, @BINDIR@, @LIBEXECDIR@ and @DATADIR@ replaced by this install's paths).
# @BIN@ is the release build's folder (RELEASE_BIN). pam_keygate.so and the pam-auth-update
# profile go where libpam and pam-auth-update look, whatever PREFIX is.
INSTALL_LIST = \
  program:@BIN@/keygate:$(PREFIX)/bin/keygate \
  setuid:@BIN@/keygate-gatekeeper:$(PREFIX)/libexec/keygate/keygate-gatekeeper \
  program:@BIN@/keygate-pam-helper:$(PREFIX)/libexec/keygate/keygate-pam-helper \
  program:@BIN@/keygate-secret-service:$(PREFIX)/libexec/keygate/keygate-secret-service \
  unit:contrib/dbus/org.freedesktop.secrets.service:$(PREFIX)/share/keygate/dbus-1/services/org.freedesktop.secrets.service \
  unit:contrib/dbus/keygate-secret-service.conf:/usr/share/dbus-1/session.d/keygate-secret-service.conf \
  unit:contrib/systemd/user/keygate-secret-service-daemon.service:$(PREFIX)/lib/systemd/user/keygate-secret-service-daemon.service \
  $(foreach f,$(HELPER_FILES),program:$(f):$(PREFIX)/bin/$(notdir $(f))) \
  $(foreach f,$(PAM_FILES),data:$(f):$(SYSCONFDIR)/pam.d/$(notdir $(f))) \
  $(foreach f,$(POLICY_FILES),data:$(f):$(PREFIX)/share/keygate/policies.d/$(notdir $(f))) \
  library:$(PAM_OUT)/pam_keygate.so:/usr/lib/$(MULTIARCH)/security/pam_keygate.so \
  $(foreach p,$(MAN_PAGES),data:$(p):$(PREFIX)/share/man/man$(subst .,,$(suffix $(p)))/$(notdir $(p))) \
  data:completions/keygate.bash:$(PREFIX)/share/bash-completion/completions/keygate \
  data:completions/_keygate:$(PREFIX)/share/zsh/vendor-completions/_keygate \
  data:completions/keygate.fish:$(PREFIX)/share/fish/vendor_completions.d/keygate.fish \
  $(foreach f,$(EXAMPLE_FILES),data:$(f):$(PREFIX)/share/doc/keygate/examples/$(notdir $(f))) \
  $(foreach f,$(UNIT_FILES),unit:$(f):$(PREFIX)/share/doc/keygate/examples/$(notdir $(f))) \
  $(foreach f,$(SYSTEM_UNIT_FILES),unit:$(f):$(PREFIX)/lib/systemd/system/$(notdir $(f))) \
  data:pam-configs/keygate:/usr/share/pam-configs/keygate \
  program:contrib/systemd/keygate-keyring-unlock:$(PREFIX)/libexec/keygate/keygate-keyring-unlock \
  program:scripts/secret-session:$(PREFIX)/libexec/keygate/secret-session \
  data:$(PYTHON_BACKEND):$(PYTHON_SITE)/keyrings/keygate/__init__.py \
  $(foreach f,$(wildcard contrib/python/$(PYTHON_DISTINFO)/*),data:$(f):$(PYTHON_SITE)/$(PYTHON_DISTINFO)/$(notdir $(f)))
# Folders that are Keygate's alone: uninstall removes them when empty.
INSTALL_OWN_DIRS = $(LIBEXECDIR) $(POLICYDIR) $(DESTDIR)$(PREFIX)/share/keygate/dbus-1/services \
  $(DESTDIR)$(PREFIX)/share/keygate/dbus-1 $(dir $(POLICYDIR)) $(DOCDIR)/examples $(DOCDIR) \
  $(PYTHONDIR)/keyrings/keygate $(PYTHONDIR)/$(PYTHON_DISTINFO) $(PYTHONDIR)/keyrings
# The release build's folder (asked of SwiftPM when a recipe needs it; scripts/make-deb passes it).
RELEASE_BIN ?= $(shell $(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)

# The list's targets, one a line, under DESTDIR (scripts/check-deb, InstallListTests).
install-list:
	@for entry in $(INSTALL_LIST); do echo "$(DESTDIR)$${entry#*:*:}"; done

install: build pam man
	@owner=$$([ "$$(id -u)" = 0 ] && echo "-o root -g root"); \
	for entry in $(INSTALL_LIST); do \
	  kind=$${entry%%:*}; source=$${entry#*:}; source=$${source%%:*}; target="$(DESTDIR)$${entry#*:*:}"; \
	  case "$$source" in @BIN@/*) source="$(RELEASE_BIN)/$${source#@BIN@/}";; esac; \
	  case $$kind in \
	    program) set -- $(INSTALL_ATOMIC) 0755 "$$source" "$$target";; \
	    setuid) set -- $(INSTALL_ATOMIC) 4755 "$$source" "$$target" $$owner;; \
	    library) set -- $(INSTALL_ATOMIC) 0644 "$$source" "$$target";; \
	    data) set -- install -m 0644 "$$source" "$$target";; \
	    unit) set -- sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@LIBEXECDIR@|$(PREFIX)/libexec/keygate|g' -e 's|@DATADIR@|$(PREFIX)/share|g' "$$source";; \
	    *) echo "make install: unknown kind $$kind in $$entry" >&2; exit 1;; \
	  esac; \
	  echo "$$* $$([ $$kind = unit ] && echo "> $$target")"; \
	  [ -d "$${target%/*}" ] || install -d -m 0755 "$${target%/*}" || exit 1; \
	  if [ $$kind = unit ]; then "$$@" > "$$target" && chmod 0644 "$$target" || exit 1; else "$$@" || exit 1; fi; \
	done
	@echo 'gatekeeper daemon: with systemd as PID 1, "sudo systemctl enable --now keygate-gatekeeper.socket"; without it the gatekeeper starts its daemon itself'
	@echo 'pam_keygate: enable it with "sudo pam-auth-update --enable keygate", or one line per stack (pam.d/examples/)'
	@# The host key (device keys for this-device-only items) is made on the target host
	@# only: never into a staging DESTDIR, and only root can make it. A new key is sealed
	@# to the TPM when /dev/tpmrm0 exists (as the .deb postinst does).
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then \
	  if [ ! -e /var/lib/keygate/host.key ] && [ ! -e /var/lib/keygate/host.key.tpm ] && [ -c /dev/tpmrm0 ] \
	     && "$(BINDIR)/keygate" setup-host --tpm; then :; else \
	  echo "$(BINDIR)/keygate setup-host"; \
	  "$(BINDIR)/keygate" setup-host; fi; \
	else \
	  echo 'note: host key not created (DESTDIR is set, or not root): run "sudo keygate setup-host" on the target host.'; \
	fi

uninstall:
	@# Take the module out of common-* first, so no stack names a missing module.
	@if [ -z "$(DESTDIR)" ] && [ -f $(PAMCONFIGSDIR)/keygate ] && command -v pam-auth-update >/dev/null; then \
	  echo "pam-auth-update --package --remove keygate"; pam-auth-update --package --remove keygate; \
	fi
	@for entry in $(INSTALL_LIST); do target="$(DESTDIR)$${entry#*:*:}"; echo "rm -f $$target"; rm -f "$$target"; done
	-rmdir $(INSTALL_OWN_DIRS) 2>/dev/null

# The second pass of `make check`: the flows that go through an item store, again with
# KEYGATE_STORE=embedded (the library, KeygateSecurity and CLI targets; tests about the
# Secret Service itself pin KEYGATE_STORE=secret-service). Left out: the classes and suites
# whose own declaration says why (`OutsideTheEmbeddedPass`, Tests/KeygateTestSupport/EmbeddedPass.swift:
# they never touch the store, test one store directly, talk to a provider on its own bus, test
# the gate itself, which opens the same sealed item from either store, or are long reliability loops), which the first pass ran already. EMBEDDED_PASS_SKIP is made
# from those declarations, not kept by hand (`make embedded-pass-skip` prints it;
# EmbeddedPassTests checks it). Swift Testing's tags cannot do this: `swift test` (Swift 6.3)
# filters by name only.
# The wrapper suites (Tests/AppleWrapperSuites) are never run directly: they need a keychain
# set up before them, and KeygateSecurityTests.WrapperSuiteRunTests runs them, in both passes.
WRAPPER_SUITES := ^AppleWrapperSuites\.
EMBEDDED_PASS_TARGETS := KeygateIntegrationTests KeygateSecurityTests KeygateCLITests
EMBEDDED_PASS_FILTER := ^($(subst $(eval) ,|,$(EMBEDDED_PASS_TARGETS)))\.
EMBEDDED_PASS_SKIP := $(shell sed -n -E 's/^(final class|struct) ([A-Za-z0-9_]+): (XCTestCase, )?OutsideTheEmbeddedPass \{.*/\2/p' \
                        $(foreach t,$(EMBEDDED_PASS_TARGETS),Tests/$(t)/*.swift) | sort | paste -sd '|')

embedded-pass-skip:
	@echo '$(EMBEDDED_PASS_SKIP)'

# The release pass's tests and the debug pass's --skip (see DEBUG_PASS_SKIP), one a line, for ReleasePassTests.
debug-pass-skip:
	@echo '$(RELEASE_PASS_FILTER)'
	@echo '$(RELEASE_PASS_SKIP)'
	@echo '$(DEBUG_PASS_SKIP)'



# The whole suite. `swift build` first so that the keygate binary the CLI tests
# run exists; then the tests inside a private session bus whose keyring lives
# in a temporary folder (nothing is written to HOME's keyrings). The PAM module
# tests load .build/pam/pam_keygate.so, so `pam` is built first. Its exit
# status is swift test's, so a failing test fails this target.
check: swift-present pam fuzz-smoke
	$(SWIFT) build $(SWIFT_FLAGS)
	scripts/secret-session --ephemeral $(SWIFT) test $(SWIFT_FLAGS) --skip '$(DEBUG_PASS_SKIP)'
	KEYGATE_STORE=embedded scripts/secret-session --ephemeral $(SWIFT) test $(SWIFT_FLAGS) --skip-build \
	    --filter '$(EMBEDDED_PASS_FILTER)' --skip '$(EMBEDDED_PASS_SKIP)'
	$(MAKE) --no-print-directory check-release

# The release pass of `make check`: what people run, run the way they run it. `make install`
# (the release build, /etc/pam.d/keygate, the shipped policies), then the tests that type at
# every prompting verb through a real pseudo-terminal, check the installed paths, and the
# CLI classes that need no test hook (RELEASE_PASS_FILTER: the macOS and secret-tool verbs,
# the store choice, doctor, usage, pinentry, the gatekeeper's attacks and hardening but the three that
# need test policy files; Keygate's own Secret Service, the installed $(LIBEXECDIR)/keygate-secret-service with real
# clients and its activation files as installed; a gated item's sealed label), against the installed $(BINDIR)/keygate and $(LIBEXECDIR)/keygate-gatekeeper with
# /etc/pam.d/keygate, real pam_unix and the installed default policy. The embedded-store pass above ran the same tests on the
# debug build; the first debug pass leaves them to this pass when it runs (DEBUG_PASS_SKIP below).
# Installing needs root: elsewhere the pass is skipped with a note, and under CI=true it fails.
RELEASE_PASS_FILTER := ^KeygateCLITests\.(TerminalCLITests|InstalledBinaryTests|MacOSVerbsTests|SecretToolVerbsTests|StoreCLITests|DoctorCLITests|KeygateUsageTests|PinentryCLITests|GatekeeperAttackTests|GateScopeAttackTests|GateHardeningTests|AccessBindingAttackTests|UserRemovalTests|ValidateCLITests|GateAuditRecordTests|ExtraAttributesCLITests|SecretServiceDaemonTests|SecretServiceAttackTests|SecretServiceActivationTests|GatedLabelCLITests)/
# Counts prompts under the test hooks' empty policy; the installed default policy gives every item
# `keygate add` stores without --access user-presence (default-access).
# The gate tests skipped here need a test policy file (a system policy the release build reads from /etc only),
# or a window shorter than the shipped 300 s (ValidateCLITests' 6-second one is a test hook),
# or a certify window shorter than the shipped 60 s (KEYGATE_TEST_CERTIFY_WINDOW, a test hook: against
# the installed gatekeeper, test_validate_isNotAPassword waits out the real minute, a whole minute of the pass).
RELEASE_PASS_SKIP   := StoreCLITests/test_migrate_bothWays|AccessBindingAttackTests/test_anAttributeClaimingMore|ValidateCLITests/test_validate_insideTheWindow|GatekeeperAttackTests/test_(aWeakerServiceNeverSatisfiesAStrongerOne|eachItemsOwnReuseDurationHolds|validate_isNotAPassword)|GateScopeAttackTests/test_anItemWithLockoutZero
# The debug pass leaves out the tests the release pass runs (RELEASE_PASS_FILTER minus
# RELEASE_PASS_SKIP, one regex made from those two, so the lists cannot drift): they run once,
# against the installed build, which is the one people run. Only when the release pass will run
# (root, as CI is): elsewhere check-release is skipped, so the debug pass keeps them.
# `make debug-pass-skip` prints the regex (RELEASE_PASS_RUNS=yes or = to choose);
# ReleasePassTests checks that every test it leaves out is one the release pass runs.
RELEASE_PASS_RUNS   ?= $(if $(filter 0,$(shell id -u)),yes)
RELEASE_PASS_TESTS  := ^(?!.*(?:$(RELEASE_PASS_SKIP)))$(patsubst ^%,%,$(RELEASE_PASS_FILTER))
DEBUG_PASS_SKIP     := $(WRAPPER_SUITES)$(if $(RELEASE_PASS_RUNS),|$(RELEASE_PASS_TESTS))
DEB_PASS_FILTER     := ^KeygateCLITests\.InstalledBinaryTests/test_(servicesGuide|aReadAsAUser|noBusAdvice|mistypedVerb|readOnlyCommands)
check-release: swift-present
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "make check-release: needs root (it runs make install, as CI does): skipped"; \
	  case "$${CI:-}" in true|1) exit 1;; esac; exit 0; fi; \
	$(MAKE) --no-print-directory install DESTDIR= && \
	KEYGATE_TERMINAL_BINARY="$(PREFIX)/bin/keygate" KEYGATE_BUILD_PRODUCTS="$(PREFIX)/bin" scripts/secret-session --ephemeral \
	  $(SWIFT) test $(SWIFT_FLAGS) --skip-build --filter '$(RELEASE_PASS_FILTER)' --skip '$(RELEASE_PASS_SKIP)'
	@# The .deb: built from the same release build and inspected (scripts/check-deb: layout,
	@# helpers, the units' paths, man pages), then SERVICES.md's steps with its own binary,
	@# unpacked into a folder every user can read.
	$(MAKE) --no-print-directory deb-check
	@root=$$(mktemp -d /tmp/keygate-deb.XXXXXX) && chmod 0755 "$$root" && \
	  dpkg-deb -x "$$(ls -t $(OUT)/deb/keygate_*.deb | head -n 1)" "$$root" && \
	  KEYGATE_TERMINAL_BINARY="$$root/usr/bin/keygate" scripts/secret-session --ephemeral \
	    $(SWIFT) test $(SWIFT_FLAGS) --skip-build --filter '$(DEB_PASS_FILTER)'; \
	  status=$$?; rm -rf "$$root"; exit $$status

# The long runs (docs/DECISIONS.md, "Reliability tests: one set of tests, two budgets"): the same XCTest cases `check` runs with small numbers
# (CrashConsistencyTests, ConcurrencyTests, ...), with big ones. STRESS_KILLS SIGKILLs per
# kill loop, STRESS_PROCS racing processes x STRESS_OPS operations, STRESS_TASKS tasks in
# the library race; the write-then-read race (WriteThenReadStressTests) runs STRESS_ROUNDS
# rounds of STRESS_SECONDS, with STRESS_LOCKERS clients locking the collection beside it
# (check runs it with 3 of 2 s). STRESS_PARTS holds the test filters; STRESS_TARGETS the long parts that
# are make targets (the fuzzers, the AddressSanitizer run), run after the tests. Each test
# prints a "STRESS name: figures" line; they are collected at the end (the log is
# $(OUT)/stress.log). Exit status: the first failure's.
STRESS_KILLS ?= 200
STRESS_PROCS ?= 8
STRESS_OPS   ?= 500
STRESS_TASKS ?= 16
STRESS_ROUNDS ?= 10
STRESS_SECONDS ?= 30
STRESS_LOCKERS ?= 1
STRESS_PARTS ?= CrashConsistencyTests ConcurrencyTests LibraryConcurrencyTests DyingDependencyTests IsolationTests \
                WriteThenReadStressTests
STRESS_LOG   := $(OUT)/stress.log

stress: swift-present pam
	$(SWIFT) build $(SWIFT_FLAGS)
	@mkdir -p $(OUT)
	@status=0; STRESS_KILLS=$(STRESS_KILLS) STRESS_PROCS=$(STRESS_PROCS) STRESS_OPS=$(STRESS_OPS) \
	  STRESS_TASKS=$(STRESS_TASKS) STRESS_ROUNDS=$(STRESS_ROUNDS) STRESS_SECONDS=$(STRESS_SECONDS) \
	  STRESS_LOCKERS=$(STRESS_LOCKERS) KEYGATE_PAM_MODULE=$(abspath $(PAM_OUT))/pam_keygate.so \
	  scripts/secret-session --ephemeral $(SWIFT) test $(SWIFT_FLAGS) \
	  --filter '$(subst $(eval) ,|,$(strip $(STRESS_PARTS)))' >$(STRESS_LOG) 2>&1 || status=$$?; \
	  grep -E '^(STRESS |Test Suite .(All|Selected) tests|.*error:|.*failed)' $(STRESS_LOG) | tail -n 60; \
	  echo "make stress: full log in $(STRESS_LOG), exit $$status"; \
	  for target in $(STRESS_TARGETS); do $(MAKE) --no-print-directory $$target || { rc=$$?; [ $$status = 0 ] && status=$$rc; }; done; \
	  exit $$status

# The Debian package: scripts/make-deb stages the tree with `make install DESTDIR=...
# PREFIX=/usr` (reusing the release build, the man pages and pam_keygate.so built here),
# then dpkg-deb builds it.
# The package installs under /usr: its pam_keygate.so names /usr/libexec/keygate/keygate-pam-helper.
deb: deb-maintainer build man
	$(MAKE) --no-print-directory pam PAM_OUT=$(OUT)/pam-deb PAM_HELPER=/usr/libexec/keygate/keygate-pam-helper
	MAKE="$(MAKE)" BUILD_OUT="$(OUT)" RELEASE_BIN="$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)" \
	  PAM_SO="$(OUT)/pam-deb/pam_keygate.so" MULTIARCH="$(MULTIARCH)" scripts/make-deb

# The packager (DEBFULLNAME/DEBEMAIL, else git's identity, else the last commit's author;
# scripts/make-deb), checked before the build.
deb-maintainer:
	@scripts/make-deb --maintainer >/dev/null

# Run by `make check`'s release pass (check-release), on its release build: builds the package, lists
# and describes it, checks its layout, and runs lintian, whose errors fail it (scripts/check-deb).
deb-check: deb
	BUILD_OUT="$(OUT)" scripts/check-deb

# Install, reinstall, remove and purge the .deb in a fresh debootstrap chroot (root, network).
deb-install-check: deb
	scripts/check-deb-install "$$(ls -t $(OUT)/deb/keygate_*.deb | head -n 1)"

demo:
	scripts/quickstart-demo

fuzz: swift-present
	$(FUZZ_ENV) FUZZ_OPT=-O scripts/fuzz run $(FUZZ_TARGETS)

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
bench: swift-present static-cxx
	SWIFT="$(SWIFT)" RELEASE_LINK_FLAGS="$(RELEASE_LINK_FLAGS)" $(if $(BUILD_PATH),BUILD_PATH="$(BUILD_PATH)") bench/run

# The login part of the bench alone, paired with BASELINE=REV's module and helper (bench/login).
bench-login: swift-present static-cxx
	SWIFT="$(SWIFT)" $(if $(BUILD_PATH),BUILD_PATH="$(BUILD_PATH)") bench/login

clean:
	rm -rf $(if $(BUILD_PATH),$(BUILD_PATH),.build)
